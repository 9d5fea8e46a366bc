/* irqinfo.h: the machine's interrupts and the devices behind them, as the
 * kernel shows them: /proc/interrupts (which IRQs have handlers, their
 * action names, chip and counts), /proc/irq/N (smp_affinity_list,
 * effective_affinity_list), /sys/kernel/irq/N (actions, chip, hwirq), the
 * devices that own the vectors (/sys/bus/pci/devices/X/msi_irqs and irq)
 * and those above them (USB devices, sound cards, network interfaces), and
 * the kernel threads (irq/N-name, ksoftirqd/N, ...), read into one
 * snapshot. Every path starts at a struct irq_env's roots, so the unit
 * tests read fixture trees of real machines (tests/fixtures/irq). The
 * writers of /proc/irq are here too: the only code that writes them.
 *
 * The /proc/interrupts parser takes a NUL-terminated buffer and trusts
 * nothing in it (fuzzed by tests/fuzz/fuzz-proc.c). Functions return 0 or
 * -errno. */
#ifndef RTSCHED_IRQINFO_H
#define RTSCHED_IRQINFO_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/sys/proc.h"

#define IRQ_ACTIONS_MAX 160     /* the action names of one IRQ, ", "-separated */
#define IRQ_CHIP_MAX 48
#define IRQ_DEV_PATH_MAX 512    /* a device's path below the sysfs root: "/devices/pci0000:00/..." */
#define IRQ_OWNERS_MAX 4        /* devices sharing one (legacy) IRQ line that are kept */

/* Where the files are: NULL means the real "/proc", "/sys" and, for
 * irqbalance's socket, "/run/irqbalance". */
struct irq_env {
	const char *proc;
	const char *sys;
	const char *irqbalance;
};

/* One numbered line of /proc/interrupts. */
struct irq_line {
	int irq;
	uint64_t count;                 /* summed over the CPUs */
	char chip[IRQ_CHIP_MAX];        /* "IO-APIC", "PCI-MSIX-0000:00:03.0", "GICv3" */
	long hwirq;                     /* -1 when the line shows none */
	char actions[IRQ_ACTIONS_MAX];  /* "xhci_hcd", or "i8042, rtc0" for a shared line */
};

/* A device that owns a vector, or one behind such a device. */
enum irq_dev_kind { IRQ_DEV_PCI, IRQ_DEV_USB, IRQ_DEV_SOUND, IRQ_DEV_NET };

struct irq_dev {
	enum irq_dev_kind kind;
	char path[IRQ_DEV_PATH_MAX];    /* below the sysfs root, resolved: "/devices/pci0000:00/0000:00:14.0" */
	char name[64];                  /* PCI: "0000:00:14.0"; USB: "1-1.2"; sound: the card's id; net: the interface */
	char driver[64];                /* the bound driver, "" if none */
	unsigned vendor, product;       /* PCI vendor:device, USB idVendor:idProduct */
	int busnum;                     /* USB: the bus (the host controller's "usbN"); else -1 */
	int card;                       /* sound: the card's number; else -1 */
	/* how it hangs together (indices into the snapshot's devs, -1: none) */
	bool has_irqs;                  /* PCI: it owns vectors */
	int owner;                      /* the nearest device owning vectors that it is or sits below */
	int usb;                        /* the USB device it is or sits behind */
	bool named;                     /* net: its owner names vectors after it ("eth0-TxRx-0") */
};

/* Which device owns an IRQ, and which of its vectors it is. */
struct irq_owner {
	int dev;                        /* index into the snapshot's devs (a PCI device) */
	int vector;                     /* the MSI/MSI-X vector's index in the device, -1 for a legacy line */
};

/* One interrupt with a handler. */
struct irq_desc {
	struct irq_line line;
	cpu_set_t affinity;             /* smp_affinity_list */
	cpu_set_t effective;            /* effective_affinity_list; the affinity where the kernel has none */
	bool has_affinity, has_effective;
	int n_owners;
	struct irq_owner owner[IRQ_OWNERS_MAX];
};

/* A kernel thread's name: Linux 6.x prints the whole of it in stat
 * ("kworker/R-kvfree_rcu_reclaim"), where comm keeps 15 characters. */
#define IRQ_KTHREAD_NAME_MAX 64

/* A kernel thread (a child of kthreadd). */
struct irq_kthread {
	pid_t tid;
	uint64_t starttime;
	char comm[IRQ_KTHREAD_NAME_MAX + 1];
	unsigned flags;                 /* PROC_PF_* */
	int policy, priority, nice;     /* from its stat */
	int irq;                        /* N of "irq/N-name", else -1 */
};

struct irq_snapshot {
	struct irq_desc *irqs;          /* by IRQ number, ascending */
	size_t n_irqs;
	struct irq_dev *devs;
	size_t n_devs;
	struct irq_kthread *kthreads;   /* only with IRQINFO_KTHREADS */
	size_t n_kthreads;
	cpu_set_t online;               /* /sys/devices/system/cpu/online */
	bool have_sysfs_irq;            /* /sys/kernel/irq gave the actions */
};

enum {
	IRQINFO_DEVICES = 1 << 0,       /* read the devices too (PCI, USB, sound, net) */
	IRQINFO_KTHREADS = 1 << 1,      /* and scan /proc for kernel threads */
};

/* What an [irq NAME] section matches (every field set must hold; empty
 * strings and has_queues false match anything): the glob match on an
 * action name, and the device keys, which hold for an IRQ when the device
 * named is served by it (irqselect.c says which vectors serve what). */
struct irq_selector {
	char match[128];          /* glob on an action name */
	char driver[64];          /* glob on the driver of a device it serves */
	char device[256];         /* glob on a served device's path, "/sys/devices/..." */
	char pci_id[10];          /* "8086:a36d" or "8086:*": the owning PCI device */
	char usb_id[10];          /* "1235:8211" or "1235:*": a USB device it serves */
	char sound_card[64];      /* glob on a served ALSA card's id, or its number */
	char net_interface[32];   /* glob on a served network interface */
	bool has_queues;
	cpu_set_t queues;         /* the queue numbers of a multi-queue device's vectors */
};

/* Parse /proc/interrupts text into *lines (malloc'd, *n of them): the
 * numbered lines only (NMI:, LOC: ... are per-CPU and have no /proc/irq
 * entry). -EINVAL if there is no header of CPU columns, -ENOMEM. */
int irqinfo_parse_interrupts(const char *text, struct irq_line **lines, size_t *n);
/* Split an action list ("a, b" as /proc/interrupts shows it, or "a,b" as
 * /sys/kernel/irq/N/actions) in place; calls fn for each name until it
 * returns true. Returns whether one did. */
bool irqinfo_each_action(const char *actions, bool (*fn)(const char *name, void *ud), void *ud);

/* irqselect.c: the IRQs sel matches, in *irqs (malloc'd, *n of them), in
 * the order a spread takes them: by queue number, then IRQ number. */
int irqinfo_select(const struct irq_snapshot *s, const struct irq_selector *sel, int **irqs, size_t *n);
/* irqselect.c: the devices IRQ irq serves, as "dev1, dev2" (their names)
 * for logs and list, "" if none is known. */
void irqinfo_served(const struct irq_snapshot *s, int irq, char *buf, size_t len);

/* Read the snapshot (what: IRQINFO_* flags). Free it with irqinfo_free()
 * whatever the result. */
int irqinfo_read(const struct irq_env *env, unsigned what, struct irq_snapshot *s);
void irqinfo_free(struct irq_snapshot *s);
/* The IRQ numbered irq in the snapshot, or NULL. */
const struct irq_desc *irqinfo_find(const struct irq_snapshot *s, int irq);
/* Read kernel thread tid (its stat under env's /proc). -ESRCH if gone,
 * -EPERM if it is no kernel thread. */
int irqinfo_read_kthread(const struct irq_env *env, pid_t tid, struct irq_kthread *k);
/* Re-read one IRQ's affinity and effective affinity (after a write). */
int irqinfo_read_affinity(const struct irq_env *env, int irq, cpu_set_t *affinity, cpu_set_t *effective);
/* The actions of IRQ irq now (its identity: a freed number can be reused
 * by another device), as /sys/kernel/irq/N/actions or /proc/interrupts
 * give them, "" if it has none. */
int irqinfo_read_actions(const struct irq_env *env, int irq, char *buf, size_t len);

/* Write an IRQ's smp_affinity_list: -EIO when the kernel refuses to move
 * it (a managed or per-CPU IRQ: older kernels say EIO, newer ones, 6.18
 * here, EPERM), -EINVAL for CPUs it cannot take, -EACCES/-EROFS without the
 * right to write /proc/irq, -ENOENT when the IRQ is gone. */
int irqinfo_write_affinity(const struct irq_env *env, int irq, const cpu_set_t *cpus);
/* /proc/irq/default_smp_affinity (the CPUs a new IRQ starts on), read and
 * written as the kernel's hexadecimal mask. */
int irqinfo_read_default_affinity(const struct irq_env *env, cpu_set_t *cpus);
int irqinfo_write_default_affinity(const struct irq_env *env, const cpu_set_t *cpus);
/* Whether the kernel manages IRQ irq's affinity itself (debugfs's
 * IRQD_AFFINITY_MANAGED flag): 1, 0, or -ENOENT when debugfs does not say. */
int irqinfo_managed(const struct irq_env *env, int irq);

/* The running irqbalance (irq/irqbalance.h works with it): its pid and
 * its socket "irqbalancePID.sock" under rundir. -ENOENT if none runs. */
int irqinfo_find_irqbalance(const char *rundir, pid_t *pid, char *sock, size_t len);

/* Does name appear in text as a word of its own ("eth1" is not in "eth10-rx")? */
bool irqinfo_has_word(const char *text, const char *name);

/* The queue number in a vector's action name: its trailing digits, after
 * anything from '@' on and the interface name ifname (may be NULL) are
 * removed ("eth0-TxRx-3" -> 3, "virtio2-input.0" -> 0, "eth0" -> -1). */
int irqinfo_queue_of(const char *action, const char *ifname);

#endif
