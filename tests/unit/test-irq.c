/* test-irq.c: interrupts and kernel threads (sys/irqinfo.h, irq/irqmgr.h)
 * against fixture /proc and /sys trees of real machines
 * (tests/fixtures/irq: this project's VM and Debian 12's 6.1 guest with a
 * USB audio device, captured with capture.py; a desktop with three xHCI controllers and a
 * server with multi-queue NICs written by layout.py). The parsers, which
 * vector serves which device, each match key, and the manager on a copy of
 * a tree: what it writes to /proc/irq, what it asks of the kernel threads
 * (task_sched_write is recorded, never made: sched-record.h; task_sched_read
 * answers from the fixture's stat and the writes made), and what it gives
 * back on reload, on a device's removal, at stop and after a crash through
 * the state journal. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/diag/diag.h"
#include "daemon/irq/hotplug.h"
#include "daemon/irq/irqbalance.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/irqinfo.h"
#include "daemon/sys/log.h"
#include "sched-record.h"
#include "unit-util.h"
#include "config-text.h"

#define FIXTURES TOP_SRCDIR "/tests/fixtures/irq"

/* The tree the code under test reads: a fixture, or a copy to write to. */
static char root[PATH_MAX], proc[PATH_MAX + 8], sys_[PATH_MAX + 8], run_ib[PATH_MAX + 16];
static struct irq_env env;

static void use(const char *base)
{
	snprintf(root, sizeof(root), "%s", base);
	snprintf(proc, sizeof(proc), "%s/proc", base);
	snprintf(sys_, sizeof(sys_), "%s/sys", base);
	/* no irqbalance in the tree: a real one running on the test machine is not asked */
	snprintf(run_ib, sizeof(run_ib), "%s/run/irqbalance", base);
	env.proc = proc;
	env.sys = sys_;
	env.irqbalance = run_ib;
}

static char tmp[PATH_MAX];

/* A writable copy of fixture name. */
static void use_copy(const char *name)
{
	char cmd[PATH_MAX * 4], line[PATH_MAX], path[PATH_MAX * 2], *tab;
	FILE *f;

	unit_tmpdir(tmp, "test-irq");
	snprintf(cmd, sizeof(cmd), "cp -a '%s/%s/.' '%s/'", FIXTURES, name, tmp);
	ck_assert_int_eq(system(cmd), 0);
	/* and its links, kept in NAME.links (links.py): git's links would be
	 * followed by make dist's tar */
	snprintf(path, sizeof(path), "%s/%s.links", FIXTURES, name);
	ck_assert_msg((f = fopen(path, "re")) != NULL, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || !(tab = strchr(line, '\t')))
			continue;
		*tab = '\0';
		snprintf(path, sizeof(path), "%s/%s", tmp, line);
		snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
		ck_assert_int_eq(system(cmd), 0);
		ck_assert_msg(symlink(tab + 1, path) == 0, "symlink %s: %s", path, strerror(errno));
	}
	fclose(f);
	use(tmp);
}

static void drop_copy(void)
{
	if (tmp[0])
		unit_rmdir(tmp);
	tmp[0] = '\0';
}

/* The text of a file of the tree, without its newline. */
static const char *cat(const char *rel)
{
	static char buf[4096];
	char path[PATH_MAX * 2];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static const char *affinity(int irq)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", irq);
	return cat(rel);
}

/* task_sched_read, answered for the fixture's threads: their stat, all the
 * fixture's CPUs, then every write recorded for them in order. */
int __real_task_sched_read(pid_t tid, struct task_sched *out);
int __wrap_task_sched_read(pid_t tid, struct task_sched *out);
int __wrap_task_sched_read(pid_t tid, struct task_sched *out)
{
	struct irq_kthread k;
	const struct sched_write *w;
	char online[256];

	/* tid 0 is the test itself (sched_record_check_wrapped) */
	if (tid == 0 || !env.proc)
		return __real_task_sched_read(tid, out);
	if (irqinfo_read_kthread(&env, tid, &k) < 0)
		return -ESRCH;
	memset(out, 0, sizeof(*out));
	out->policy = k.policy;
	out->priority = k.priority;
	out->nice = k.nice;
	snprintf(online, sizeof(online), "%s", cat("sys/devices/system/cpu/online"));
	ck_assert_int_eq(cpulist_parse(online, &out->cpus, NULL), 0);
	for (size_t i = 0; (w = sched_record_nth(tid, i)); i++) {
		cpu_set_t cpus = out->cpus;
		*out = w->s;
		if (!w->set_cpus)
			out->cpus = cpus;
	}
	return 0;
}

static struct snapshot_holder {
	struct irq_snapshot s;
	bool loaded;
} snap;

static void load(const char *fixture)
{
	use_copy(fixture);
	ck_assert_int_eq(irqinfo_read(&env, IRQINFO_DEVICES | IRQINFO_KTHREADS, &snap.s), 0);
	snap.loaded = true;
}

/* The IRQs sel matches, as "n n n". */
static const char *picked(const struct irq_selector *sel)
{
	static char buf[1024];
	size_t n, o = 0;
	int *v;

	ck_assert_int_eq(irqinfo_select(&snap.s, sel, &v, &n), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%d", i ? " " : "", v[i]);
	free(v);
	return buf;
}

static void setup(void)
{
	env.proc = env.sys = env.irqbalance = NULL;
	sched_record_check_wrapped();
	sched_record_reset();
	memset(&snap, 0, sizeof(snap));
	tmp[0] = '\0';
}

static void teardown(void)
{
	if (snap.loaded)
		irqinfo_free(&snap.s);
	drop_copy();
}

/* ------------------------------------------------------------ parsers --- */

START_TEST(test_parse_interrupts)
{
	/* 6.18's per-device MSI domains, 6.1's IR-PCI-MSI, ARM's GIC with
	 * Level/Edge words, a shared line, per-CPU rows and junk */
	const char *text =
		"           CPU0       CPU1       \n"
		" 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
		" 38:          0       4399  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
		" 151:     124400          0  IR-PCI-MSI 327680-edge      xhci_hcd\n"
		"  18:          0         64  IR-IO-APIC  18-fasteoi   ehci_hcd:usb1, ehci_hcd:usb2, i801_smbus\n"
		"  11:      54321      12345     GICv3  27 Level     arch_timer\n"
		"  60:          3          0   ITS-MSI 524288 Edge      xhci-hcd:usb1\n"
		"  61:          0          0   XT-PIC  cascade\n"
		"NMI:          0          0   Non-maskable interrupts\n"
		"ERR:          0\n"
		"x9: nonsense\n"
		" 99 no colon\n";
	struct irq_line *l;
	size_t n;

	ck_assert_int_eq(irqinfo_parse_interrupts(text, &l, &n), 0);
	ck_assert_uint_eq(n, 7);
	ck_assert_int_eq(l[0].irq, 24);
	ck_assert_str_eq(l[0].chip, "IO-APIC");
	ck_assert_int_eq(l[0].hwirq, 5);
	ck_assert_str_eq(l[0].actions, "ACPI:Ged");
	ck_assert_str_eq(l[1].chip, "PCI-MSIX-0000:00:03.0");
	ck_assert_int_eq(l[1].hwirq, 1);
	ck_assert_uint_eq(l[1].count, 4399);
	ck_assert_str_eq(l[1].actions, "virtio2-input.0");
	ck_assert_int_eq(l[2].hwirq, 327680);
	ck_assert_str_eq(l[3].actions, "ehci_hcd:usb1, ehci_hcd:usb2, i801_smbus");
	ck_assert_str_eq(l[4].chip, "GICv3");
	ck_assert_int_eq(l[4].hwirq, 27);
	ck_assert_str_eq(l[4].actions, "arch_timer");
	ck_assert_uint_eq(l[4].count, 66666);
	ck_assert_str_eq(l[5].actions, "xhci-hcd:usb1");
	ck_assert_int_eq(l[6].hwirq, -1);
	ck_assert_str_eq(l[6].actions, "cascade");
	free(l);
	ck_assert_int_eq(irqinfo_parse_interrupts("no header\n 1: 2 x\n", &l, &n), -EINVAL);
	ck_assert_int_eq(irqinfo_parse_interrupts("", &l, &n), -EINVAL);
}
END_TEST

START_TEST(test_queue_of)
{
	ck_assert_int_eq(irqinfo_queue_of("eth0-TxRx-3", "eth0"), 3);
	ck_assert_int_eq(irqinfo_queue_of("eth0", "eth0"), -1);
	ck_assert_int_eq(irqinfo_queue_of("virtio2-input.0", NULL), 0);
	ck_assert_int_eq(irqinfo_queue_of("virtio2-config", NULL), -1);
	ck_assert_int_eq(irqinfo_queue_of("mlx5_comp7@pci:0000:3b:00.0", NULL), 7);
	ck_assert_int_eq(irqinfo_queue_of("i40e-ens1f0-TxRx-12", "ens1f0"), 12);
	ck_assert_int_eq(irqinfo_queue_of("nvme0q3", NULL), 3);
	ck_assert_int_eq(irqinfo_queue_of("xhci_hcd", NULL), -1);
	ck_assert_int_eq(irqinfo_queue_of("enp3s0f1-rx-2", "enp3s0f1"), 2);
}
END_TEST

START_TEST(test_parse_irqbalance_setup)
{
	cpu_set_t cpus;
	char irqs[64];

	ck_assert_int_eq(irqbalance_parse_setup("SLEEP 10 IRQ 30 LOAD 0 DIFF 0 CLASS 0 IRQ 31 LOAD 5 DIFF 2 CLASS 3 "
						"BANNED 00000002", &cpus, irqs, sizeof(irqs)), 0);
	ck_assert_int_eq(CPU_COUNT(&cpus), 1);
	ck_assert(CPU_ISSET(1, &cpus));
	ck_assert_str_eq(irqs, "30 31");
	ck_assert_int_eq(irqbalance_parse_setup("SLEEP 10 BANNED 00000000,00000101", &cpus, irqs, sizeof(irqs)), 0);
	ck_assert_int_eq(CPU_COUNT(&cpus), 2);
	ck_assert(CPU_ISSET(0, &cpus) && CPU_ISSET(8, &cpus));
	ck_assert_str_eq(irqs, "");
	ck_assert_int_eq(irqbalance_parse_setup("stats", &cpus, irqs, sizeof(irqs)), -EINVAL);
}
END_TEST

START_TEST(test_parse_uevent)
{
	const char add[] = "add@/devices/pci0000:00/0000:00:04.0/usb1/1-1\0ACTION=add\0DEVPATH=/devices/pci0000:00/"
			   "0000:00:04.0/usb1/1-1\0SUBSYSTEM=usb\0DEVTYPE=usb_device\0SEQNUM=1234";
	const char blk[] = "change@/devices/virtual/block/loop0\0ACTION=change\0SUBSYSTEM=block";
	const char *action, *devpath;

	ck_assert_int_eq(hotplug_parse_uevent(add, sizeof(add), &action, &devpath), 1);
	ck_assert_str_eq(devpath, "/devices/pci0000:00/0000:00:04.0/usb1/1-1");
	ck_assert(strncmp(action, "add@", 4) == 0);
	ck_assert_int_eq(hotplug_parse_uevent(blk, sizeof(blk), &action, &devpath), 0);
	/* udev's messages start "libudev", and a message without NUL is cut */
	ck_assert_int_eq(hotplug_parse_uevent("libudev", 8, &action, &devpath), -EINVAL);
	ck_assert_int_eq(hotplug_parse_uevent("add@/x", 6, &action, &devpath), -EINVAL);
}
END_TEST

/* ---------------------------------------------------- snapshots, match --- */

START_TEST(test_vm_snapshot)
{
	const struct irq_desc *d;

	load("vm");
	ck_assert_uint_eq(snap.s.n_irqs, 19);
	ck_assert(snap.s.have_sysfs_irq);
	ck_assert_int_eq(CPU_COUNT(&snap.s.online), 2);
	ck_assert_ptr_nonnull(d = irqinfo_find(&snap.s, 38));
	ck_assert_str_eq(d->line.actions, "virtio2-input.0");
	ck_assert_int_eq(d->n_owners, 1);
	ck_assert_int_eq(d->owner[0].vector, 1);
	ck_assert_str_eq(snap.s.devs[d->owner[0].dev].name, "0000:00:03.0");
	ck_assert_int_eq(CPU_COUNT(&d->affinity), 2);
	ck_assert_int_eq(CPU_COUNT(&d->effective), 1);
	ck_assert_ptr_nonnull(d = irqinfo_find(&snap.s, 24));
	ck_assert_int_eq(d->n_owners, 0);
	ck_assert_ptr_null(irqinfo_find(&snap.s, 27));
	/* the kernel threads, whole names and all; pid 1 is none */
	bool ged = false, long_name = false;
	for (size_t i = 0; i < snap.s.n_kthreads; i++) {
		const struct irq_kthread *k = &snap.s.kthreads[i];
		ck_assert_int_ne(k->tid, 1);
		if (strcmp(k->comm, "irq/24-ACPI:Ged") == 0) {
			ged = true;
			ck_assert_int_eq(k->irq, 24);
			ck_assert_int_eq(k->policy, SCHED_FIFO);
			ck_assert_int_eq(k->priority, 50);
		}
		long_name |= strlen(k->comm) > 15;
	}
	ck_assert(ged);
	ck_assert(long_name);
}
END_TEST

START_TEST(test_vm_select)
{
	struct irq_selector q;

	load("vm");
	memset(&q, 0, sizeof(q));
	strcpy(q.match, "virtio2-input.*");
	ck_assert_str_eq(picked(&q), "38");
	memset(&q, 0, sizeof(q));
	strcpy(q.net_interface, "eth0");
	ck_assert_str_eq(picked(&q), "38 39 37"); /* the queues first, by number */
	q.has_queues = true;
	CPU_ZERO(&q.queues);
	CPU_SET(0, &q.queues);
	ck_assert_str_eq(picked(&q), "38 39");
	memset(&q, 0, sizeof(q));
	strcpy(q.pci_id, "1af4:1041");
	ck_assert_str_eq(picked(&q), "38 39 37");
	strcpy(q.pci_id, "1af4:*");
	strcpy(q.match, "*-config");
	ck_assert_str_eq(picked(&q), "28 33 35 37 40");
	memset(&q, 0, sizeof(q));
	strcpy(q.driver, "virtio_net");
	ck_assert_str_eq(picked(&q), "38 39 37");
	memset(&q, 0, sizeof(q));
	strcpy(q.device, "*/0000:00:02.0");
	ck_assert_str_eq(picked(&q), "36 35");
	strcpy(q.match, "ACPI:Ged");
	ck_assert_str_eq(picked(&q), "");
	memset(&q, 0, sizeof(q));
	strcpy(q.match, "ACPI:Ged");
	ck_assert_str_eq(picked(&q), "24 25");
	memset(&q, 0, sizeof(q));
	strcpy(q.usb_id, "*");
	ck_assert_str_eq(picked(&q), "");
}
END_TEST

/* Three xHCI controllers, eight vectors on one: a USB device, its sound
 * card and its id pick the controller's vector 0 only. */
START_TEST(test_desktop_select)
{
	struct irq_selector q;

	load("desktop-xhci");
	memset(&q, 0, sizeof(q));
	strcpy(q.usb_id, "1235:8210");
	ck_assert_str_eq(picked(&q), "28");
	strcpy(q.usb_id, "1235:*");
	ck_assert_str_eq(picked(&q), "28");
	memset(&q, 0, sizeof(q));
	strcpy(q.sound_card, "USB");
	ck_assert_str_eq(picked(&q), "28");
	strcpy(q.sound_card, "2");
	ck_assert_str_eq(picked(&q), "28");
	strcpy(q.sound_card, "PCH");
	ck_assert_str_eq(picked(&q), "44");
	strcpy(q.sound_card, "NVidia");           /* a legacy line */
	ck_assert_str_eq(picked(&q), "26");
	memset(&q, 0, sizeof(q));
	strcpy(q.usb_id, "0403:6001");            /* the DMX interface, on the one-vector controller */
	ck_assert_str_eq(picked(&q), "27");
	memset(&q, 0, sizeof(q));
	strcpy(q.usb_id, "046d:c52b");            /* behind EHCI, on the shared legacy line */
	ck_assert_str_eq(picked(&q), "18");
	memset(&q, 0, sizeof(q));
	strcpy(q.driver, "xhci_hcd");             /* rtirq's way: every vector of every controller */
	ck_assert_str_eq(picked(&q), "27 28 29 30 31 32 33 34 35 36");
	strcpy(q.device, "*/0000:0a:00.0");
	ck_assert_str_eq(picked(&q), "28 29 30 31 32 33 34 35");
	memset(&q, 0, sizeof(q));
	strcpy(q.driver, "snd-usb-audio");         /* the interface's driver: the vector serving it */
	ck_assert_str_eq(picked(&q), "28");
	memset(&q, 0, sizeof(q));
	strcpy(q.match, "PCIe PME");               /* a shared action list matches on any name */
	ck_assert_str_eq(picked(&q), "38");
	memset(&q, 0, sizeof(q));
	strcpy(q.usb_id, "1235:8210");
	strcpy(q.sound_card, "PCH");               /* every key must hold */
	ck_assert_str_eq(picked(&q), "");
	char served[256];
	irqinfo_served(&snap.s, 38, served, sizeof(served));
	ck_assert_str_eq(served, "0000:00:1c.0 pcieport"); /* the root port's vector serves nothing behind it */
}
END_TEST

/* Multi-queue NICs: an interface's own vectors, its queues, in order. */
START_TEST(test_server_select)
{
	struct irq_selector q;

	load("server-mqnic");
	memset(&q, 0, sizeof(q));
	strcpy(q.net_interface, "enp3s0f0");
	ck_assert_str_eq(picked(&q), "101 102 103 104 105 106 107 108 100");
	q.has_queues = true;
	cpulist_parse("0-3", &q.queues, NULL);
	ck_assert_str_eq(picked(&q), "101 102 103 104");
	memset(&q, 0, sizeof(q));
	strcpy(q.net_interface, "ens1f0");         /* i40e's misc vector is named for the device, not the port */
	q.has_queues = true;
	cpulist_parse("14-15", &q.queues, NULL);
	ck_assert_str_eq(picked(&q), "133 134");
	memset(&q, 0, sizeof(q));
	strcpy(q.net_interface, "enp3s0f*");
	strcpy(q.match, "*-TxRx-7");
	ck_assert_str_eq(picked(&q), "108 117");
	memset(&q, 0, sizeof(q));
	strcpy(q.match, "nvme0q*");
	ck_assert_uint_eq(strlen(picked(&q)) > 0, 1);
	ck_assert_uint_eq(snap.s.n_kthreads, 85);
}
END_TEST

/* Debian 12's 6.1 kernel under qemu, threadirqs, a qemu-xhci controller
 * with three vectors and a usb-audio device on it (captured in the guest of
 * make check-kernels): 6.1's chip is "PCI-MSI" for every device, so the
 * vector's index is its place among the device's numbers. */
START_TEST(test_guest_select)
{
	struct irq_selector q;

	load("guest-6.1-xhci");
	memset(&q, 0, sizeof(q));
	strcpy(q.usb_id, "46f4:0002");
	ck_assert_str_eq(picked(&q), "34");
	memset(&q, 0, sizeof(q));
	strcpy(q.sound_card, "Audio");
	ck_assert_str_eq(picked(&q), "34");
	memset(&q, 0, sizeof(q));
	strcpy(q.match, "xhci_hcd");
	ck_assert_str_eq(picked(&q), "34 35 36");
	memset(&q, 0, sizeof(q));
	strcpy(q.driver, "snd-usb-audio");
	ck_assert_str_eq(picked(&q), "34");
	ck_assert_int_eq(irqinfo_find(&snap.s, 36)->owner[0].vector, 2);
	/* irq 9, ACPI's legacy line on the PIIX4 function */
	ck_assert_int_eq(irqinfo_find(&snap.s, 9)->owner[0].vector, -1);
}
END_TEST

/* ------------------------------------------------------------ manager --- */

static struct config *cfg;
static sd_event *event;
static struct irqmgr *mgr;

static void mgr_setup(void)
{
	setup();
	cfg = NULL;
	mgr = NULL;
	ck_assert_int_ge(sd_event_new(&event), 0);
}

static void mgr_teardown(void)
{
	irqmgr_free(mgr, false);
	config_free(cfg);
	sd_event_unref(event);
	teardown();
}

static char cfgdir[PATH_MAX];

static struct config *conf(const char *text)
{
	struct config *c;

	unit_tmpdir(cfgdir, "test-irq-conf");
	c = unit_config(cfgdir, text);
	unit_rmdir(cfgdir);
	return c;
}

/* The last write to tid, or NULL. */
static const struct sched_write *last(pid_t tid)
{
	return sched_record_last(tid);
}

static const struct kt_entry *kt(pid_t tid)
{
	for (const struct kt_entry *k = irqmgr_kthreads(mgr); k; k = k->next)
		if (k->tid == tid)
			return k;
	return NULL;
}

/* kt() of a thread the manager must hold: the test fails here if it does not */
static const struct kt_entry *held(pid_t tid)
{
	const struct kt_entry *k = kt(tid);

	ck_assert_msg(k != NULL, "kernel thread %d is not held", (int)tid);
	return k;
}

static const struct irq_entry *entry(int irq)
{
	for (const struct irq_entry *e = irqmgr_irqs(mgr); e; e = e->next)
		if (e->irq == irq)
			return e;
	return NULL;
}

/* entry() of an IRQ the manager must hold: the test fails here if not */
static const struct irq_entry *held_irq(int irq)
{
	const struct irq_entry *e = entry(irq);

	ck_assert_msg(e != NULL, "irq %d is not held", irq);
	return e;
}

/* last() of a thread that must have been written: the test fails here if not */
static const struct sched_write *wrote(pid_t tid)
{
	const struct sched_write *w = last(tid);

	ck_assert_msg(w != NULL, "nothing was written to thread %d", (int)tid);
	return w;
}

START_TEST(test_affinity_set_and_restored)
{
	use_copy("vm");
	cfg = conf("[irq net]\nnet-interface = eth0\ncpus = 1\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_str_eq(affinity(37), "1");
	ck_assert_str_eq(affinity(38), "1");
	ck_assert_str_eq(affinity(39), "1");
	ck_assert_str_eq(affinity(36), "0-1");     /* not the disk's */
	ck_assert_str_eq(irqmgr_irq_section(mgr, 38), "net");
	ck_assert_ptr_null(irqmgr_irq_section(mgr, 36));
	ck_assert_ptr_nonnull(entry(38));
	ck_assert(held_irq(38)->written);
	ck_assert_str_eq(held_irq(38)->served, "0000:00:03.0 virtio-pci, net eth0 virtio_net");
	/* a reload without the section gives them back */
	struct config *c2 = conf("[irq ged]\nmatch = ACPI:Ged\npriority = 60\n");
	irqmgr_reconfigure(mgr, c2);
	config_free(cfg);
	cfg = c2;
	ck_assert_str_eq(affinity(38), "0-1");
	ck_assert_ptr_null(irqmgr_irq_section(mgr, 38));
	ck_assert_str_eq(irqmgr_irq_section(mgr, 24), "ged");
}
END_TEST

START_TEST(test_irq_thread_priority)
{
	use_copy("vm");
	cfg = conf("[irq ged]\nmatch = ACPI:Ged\npriority = 60\n[irq net]\nmatch = virtio2-input.0\npriority = 70\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_ptr_nonnull(last(50));
	ck_assert_int_eq(wrote(50)->s.policy, SCHED_FIFO);
	ck_assert_int_eq(wrote(50)->s.priority, 60);
	ck_assert(!wrote(50)->set_cpus);
	ck_assert_int_eq(wrote(51)->s.priority, 60);
	ck_assert_ptr_nonnull(kt(50));
	ck_assert_int_eq(held(50)->original.priority, 50);
	ck_assert_int_eq(held(50)->applied.priority, 60);
	ck_assert_str_eq(irqmgr_tid_section(mgr, 50), "ged");
	/* virtio2-input.0 has no thread here: said, not silent */
	ck_assert_ptr_nonnull(entry(38));
	ck_assert_str_eq(held_irq(38)->code, IRQ_CODE_NOT_THREADED);
	/* a second sync writes nothing new */
	size_t n = sched_record_n();
	ck_assert_int_eq(irqmgr_sync(mgr), 0);
	ck_assert_uint_eq(sched_record_n(), n);
	/* stop: FIFO 50 again */
	irqmgr_free(mgr, true);
	mgr = NULL;
	ck_assert_int_eq(wrote(50)->s.priority, 50);
	ck_assert_int_eq(wrote(51)->s.priority, 50);
}
END_TEST

/* what irqmgr_set_watch() told: +tid held, -tid let go, in order */
static char watched[256];
static void on_watch(void *ud, pid_t tid, bool held)
{
	size_t n = strlen(watched);

	(void)ud;
	snprintf(watched + n, sizeof(watched) - n, "%s%c%d", n ? " " : "", held ? '+' : '-', (int)tid);
}

/* the BPF observer follows the threads a section holds: told of each at
 * every sync, and when the section goes, told to let them go */
START_TEST(test_watch_follows_held_threads)
{
	use_copy("vm");
	cfg = conf("[irq ged]\nmatch = ACPI:Ged\npriority = 60\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	watched[0] = '\0';
	irqmgr_set_watch(mgr, on_watch, NULL);
	ck_assert_int_eq(irqmgr_sync(mgr), 0);
	ck_assert(strstr(watched, "+50") && strstr(watched, "+51"));
	ck_assert(!strchr(watched, '-'));
	watched[0] = '\0';
	struct config *c2 = conf("[irq net]\nnet-interface = eth0\ncpus = 1\n");
	irqmgr_reconfigure(mgr, c2);
	config_free(cfg);
	cfg = c2;
	ck_assert_msg(strstr(watched, "-50") && strstr(watched, "-51") && !strchr(watched, '+'), "%s", watched);
	ck_assert_ptr_null(kt(50));
}
END_TEST

START_TEST(test_kthread_sections)
{
	use_copy("vm");
	cfg = conf("[kthread softirq]\nmatch = ksoftirqd/*\npriority = 2\ncpus = 0\n"
		   "[kthread rcu]\nmatch = rcu_preempt\npolicy = fifo\npriority = 3\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	/* ksoftirqd/0 (14) and /1 (22): FIFO 2, CPUs not touched (bound) */
	ck_assert_int_eq(wrote(14)->s.policy, SCHED_FIFO);
	ck_assert_int_eq(wrote(14)->s.priority, 2);
	ck_assert(!wrote(14)->set_cpus);
	ck_assert_str_eq(held(22)->code, IRQ_CODE_BOUND);
	ck_assert_int_eq(wrote(15)->s.priority, 3);
	ck_assert_ptr_null(held(15)->code);
	ck_assert_ptr_null(last(18));               /* migration/0: no section names it */
	/* a reload that drops rcu gives rcu_preempt back its SCHED_OTHER */
	struct config *c2 = conf("[kthread softirq]\nmatch = ksoftirqd/*\npriority = 2\n");
	irqmgr_reconfigure(mgr, c2);
	config_free(cfg);
	cfg = c2;
	ck_assert_int_eq(wrote(15)->s.policy, SCHED_OTHER);
	ck_assert_ptr_null(kt(15));
	ck_assert_ptr_null(held(22)->code);
}
END_TEST

/* In the guest: the usb-audio device's vector's thread, only that one. */
START_TEST(test_guest_usb_priority)
{
	use_copy("guest-6.1-xhci");
	cfg = conf("[daemon]\nmax-priority = 95\n[irq usb-audio]\nusb-id = 46f4:*\npriority = 70\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_ptr_nonnull(last(143));
	ck_assert_int_eq(wrote(143)->s.policy, SCHED_FIFO);
	ck_assert_int_eq(wrote(143)->s.priority, 70);
	ck_assert_uint_eq(sched_record_count(144), 0);
	ck_assert_uint_eq(sched_record_count(145), 0);
	ck_assert_str_eq(irqmgr_tid_section(mgr, 143), "usb-audio");
	irqmgr_free(mgr, true);
	mgr = NULL;
	ck_assert_int_eq(wrote(143)->s.priority, 50);
}
END_TEST

/* A USB audio device: the vector serving it, and back when it is unplugged. */
START_TEST(test_usb_device_comes_and_goes)
{
	use_copy("desktop-xhci");
	cfg = conf("[irq scarlett]\nusb-id = 1235:8210\ncpus = 1\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_str_eq(affinity(28), "1");
	for (int irq = 29; irq <= 36; irq++)
		ck_assert_str_eq(affinity(irq), "0-15");
	ck_assert_str_eq(affinity(27), "0-15");
	/* unplugged: its device and card are gone from sysfs */
	char cmd[PATH_MAX * 4];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys/bus/usb/devices/5-2' '%s/sys/bus/usb/devices/5-2:1.0' "
		 "'%s/sys/class/sound/card2'", root, root, root);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(irqmgr_sync(mgr), 0);
	ck_assert_str_eq(affinity(28), "0-15");
	ck_assert_ptr_null(irqmgr_irq_section(mgr, 28));
}
END_TEST

/* Queues spread over CPUs, one each; the IRQ numbers reused by another
 * device are not given the old one's CPUs. */
START_TEST(test_spread_and_reuse)
{
	use_copy("server-mqnic");
	cfg = conf("[irq nic]\nnet-interface = enp3s0f0\nqueues = 0-3\ncpus = 0-1\nspread = yes\n");
	/* the fixture has 16 CPUs, this machine fewer: spread over 4-7 */
	cpulist_parse("4-7", &cfg->irqs[0].cpus, NULL);
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_str_eq(affinity(101), "4");
	ck_assert_str_eq(affinity(102), "5");
	ck_assert_str_eq(affinity(103), "6");
	ck_assert_str_eq(affinity(104), "7");
	ck_assert_str_eq(affinity(105), "0-15");
	ck_assert_str_eq(affinity(100), "0-15");
	/* the threads follow their vector (to what effective_affinity_list says) */
	ck_assert_ptr_nonnull(kt(201));
	ck_assert(wrote(201)->set_cpus);
	/* IRQ 101 is freed and another device takes the number */
	write_file("sys/kernel/irq/101/actions", "other-device\n");
	ck_assert_int_eq(irqmgr_sync(mgr), 0);
	ck_assert_str_eq(affinity(101), "4");       /* left as it is: not the original's to restore */
	ck_assert_ptr_null(irqmgr_irq_section(mgr, 101));
	irqmgr_free(mgr, true);
	mgr = NULL;
	ck_assert_str_eq(affinity(102), "0-15");
	ck_assert_str_eq(affinity(101), "4");
}
END_TEST

START_TEST(test_avoid_cpus)
{
	use_copy("vm");
	cfg = conf("[daemon]\nirq-avoid-cpus = 1\n[irq net]\nmatch = virtio2-input.0\ncpus = 1\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_str_eq(affinity(38), "1");        /* claimed: where its section says */
	ck_assert_str_eq(affinity(24), "0");
	ck_assert_str_eq(affinity(36), "0");
	ck_assert_str_eq(affinity(43), "0");
	ck_assert_str_eq(cat("proc/irq/default_smp_affinity"), "1");
	ck_assert_str_eq(irqmgr_irq_section(mgr, 36), "irq-avoid-cpus");
	struct irqmgr_stats st;
	irqmgr_stats(mgr, &st);
	ck_assert_str_eq(st.avoid, "1");
	ck_assert_uint_eq(st.avoided, 18);
	/* a reload without it moves them back */
	struct config *c2 = conf("[irq net]\nmatch = virtio2-input.0\ncpus = 1\n");
	irqmgr_reconfigure(mgr, c2);
	config_free(cfg);
	cfg = c2;
	ck_assert_str_eq(affinity(24), "0-1");
	ck_assert_str_eq(affinity(36), "0-1");
	ck_assert_str_eq(cat("proc/irq/default_smp_affinity"), "3");
	ck_assert_str_eq(affinity(38), "1");
	irqmgr_free(mgr, true);
	mgr = NULL;
	ck_assert_str_eq(affinity(38), "0-1");
}
END_TEST

/* isolate = yes (the CPU isolation's hook): the unclaimed IRQs leave the
 * isolated CPUs with irq-avoid-cpus off, a claimed one stays, and all come
 * back on release. */
START_TEST(test_isolated_cpus)
{
	cpu_set_t iso;

	use_copy("vm");
	cfg = conf("[irq net]\nmatch = virtio2-input.0\ncpus = 1\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_str_eq(affinity(24), "0-1");
	CPU_ZERO(&iso);
	CPU_SET(1, &iso);
	irqmgr_isolate(mgr, &iso);
	ck_assert_str_eq(affinity(24), "0");
	ck_assert_str_eq(affinity(36), "0");
	ck_assert_str_eq(affinity(38), "1");        /* claimed: its section's choice */
	ck_assert_str_eq(cat("proc/irq/default_smp_affinity"), "1");
	ck_assert_str_eq(irqmgr_irq_section(mgr, 36), "irq-avoid-cpus");
	struct irqmgr_stats st;
	irqmgr_stats(mgr, &st);
	ck_assert_str_eq(st.avoid, "1");
	/* a reload keeps it: isolation, not the configuration, asked */
	struct config *c2 = conf("[irq net]\nmatch = virtio2-input.0\ncpus = 1\n[daemon]\nlog-level = info\n");
	irqmgr_reconfigure(mgr, c2);
	config_free(cfg);
	cfg = c2;
	ck_assert_str_eq(affinity(36), "0");
	CPU_ZERO(&iso);
	irqmgr_isolate(mgr, &iso);
	ck_assert_str_eq(affinity(24), "0-1");
	ck_assert_str_eq(affinity(36), "0-1");
	ck_assert_str_eq(affinity(38), "1");
	ck_assert_str_eq(cat("proc/irq/default_smp_affinity"), "3");
	irqmgr_stats(mgr, &st);
	ck_assert_str_eq(st.avoid, "off");
}
END_TEST

/* An IRQ number freed and taken by another device while moved: the new
 * device's own CPUs are what it gets back, not the old device's. */
START_TEST(test_number_reused_while_avoided)
{
	use_copy("vm");
	cfg = conf("[daemon]\nirq-avoid-cpus = 1\n");
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, NULL, NULL, cfg, NULL), 0);
	ck_assert_str_eq(affinity(24), "0");
	write_file("sys/kernel/irq/24/actions", "newdev\n");
	write_file("proc/irq/24/smp_affinity_list", "1\n");
	ck_assert_int_eq(irqmgr_sync(mgr), 0);
	ck_assert_str_eq(affinity(24), "0");
	struct config *c2 = conf("[daemon]\nlog-level = info\n");
	irqmgr_reconfigure(mgr, c2);
	config_free(cfg);
	cfg = c2;
	ck_assert_str_eq(affinity(24), "1");
	ck_assert_str_eq(affinity(25), "0-1");
}
END_TEST

/* A crash: the next manager restores what the first one found, not what
 * it left, from the journal. */
START_TEST(test_journal_after_crash)
{
	struct registry *reg;
	struct state *st;
	char path[PATH_MAX * 2];

	use_copy("vm");
	snprintf(path, sizeof(path), "%s/state", root);
	cfg = conf("[irq ged]\nmatch = ACPI:Ged\npriority = 60\n[irq net]\nmatch = virtio2-input.0\ncpus = 1\n"
		   "[kthread softirq]\nmatch = ksoftirqd/0\npriority = 2\n");
	ck_assert_int_eq(registry_new(&reg, event), 0);
	ck_assert_int_eq(state_open(&st, reg, cfg, path), 0);
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, st, reg, cfg, NULL), 0);
	ck_assert_str_eq(affinity(38), "1");
	ck_assert_int_eq(wrote(50)->s.priority, 60);
	/* killed: nothing given back, the journal stays */
	irqmgr_free(mgr, false);
	mgr = NULL;
	state_free(st);
	ck_assert_str_eq(affinity(38), "1");
	/* meanwhile the kernel's view is what rtschedd left: the recorded
	 * writes stay; the next rtschedd runs without the sections */
	struct config *c2 = conf("[daemon]\nlog-level = info\n");
	ck_assert_int_eq(state_open(&st, reg, c2, path), 0);
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, st, reg, c2, NULL), 0);
	ck_assert_str_eq(affinity(38), "0-1");
	ck_assert_int_eq(wrote(50)->s.priority, 50);
	ck_assert_int_eq(wrote(51)->s.priority, 50);
	ck_assert_int_eq(wrote(14)->s.policy, SCHED_OTHER);
	ck_assert_ptr_null(irqmgr_irqs(mgr));
	ck_assert_ptr_null(irqmgr_kthreads(mgr));
	irqmgr_free(mgr, true);
	mgr = NULL;
	state_free(st);
	registry_free(reg, false);
	config_free(c2);
}
END_TEST

/* A crash while CPU 1 was isolated: the next manager, told at its start
 * that isolation still holds CPU 1 (re-adopted from the journal), keeps
 * the IRQs it had moved off CPU 1 there from its first sync, and gives
 * them back on release. Told nothing, its first sync would restore them
 * onto CPU 1 until isolation's hook ran. */
START_TEST(test_isolated_after_crash)
{
	struct registry *reg;
	struct state *st;
	char path[PATH_MAX * 2];
	cpu_set_t iso, none;

	use_copy("vm");
	snprintf(path, sizeof(path), "%s/state", root);
	cfg = conf("[daemon]\nlog-level = info\n");
	CPU_ZERO(&iso);
	CPU_SET(1, &iso);
	CPU_ZERO(&none);
	ck_assert_int_eq(registry_new(&reg, event), 0);
	ck_assert_int_eq(state_open(&st, reg, cfg, path), 0);
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, st, reg, cfg, NULL), 0);
	irqmgr_isolate(mgr, &iso);
	ck_assert_str_eq(affinity(24), "0");
	ck_assert_str_eq(affinity(36), "0");
	/* killed */
	irqmgr_free(mgr, false);
	mgr = NULL;
	state_free(st);
	ck_assert_int_eq(state_open(&st, reg, cfg, path), 0);
	ck_assert_int_eq(irqmgr_new(&mgr, event, &env, st, reg, cfg, &iso), 0);
	ck_assert_str_eq(affinity(24), "0");
	ck_assert_str_eq(affinity(36), "0");
	ck_assert_str_eq(cat("proc/irq/default_smp_affinity"), "1");
	irqmgr_isolate(mgr, &iso);   /* isolation's hook: nothing more to do */
	ck_assert_str_eq(affinity(36), "0");
	irqmgr_isolate(mgr, &none);  /* released: the originals the journal kept */
	ck_assert_str_eq(affinity(24), "0-1");
	ck_assert_str_eq(affinity(36), "0-1");
	ck_assert_str_eq(cat("proc/irq/default_smp_affinity"), "3");
	irqmgr_free(mgr, true);
	mgr = NULL;
	state_free(st);
	registry_free(reg, false);
}
END_TEST

/* ---------------------------------------------------------- diagnosis --- */

/* The findings of diag_irq() on the tree, as "code code ..." and their text. */
static char found[16384];

static const char *diagnose(const struct diag_irq_input *in)
{
	struct diag_env de = { .proc = proc, .sys = sys_ };
	struct diag_report rep;
	size_t o = 0;

	diag_report_init(&rep);
	ck_assert_int_eq(diag_irq(&de, in, &rep), 0);
	found[0] = '\0';
	for (size_t i = 0; i < rep.n; i++)
		o += (size_t)snprintf(found + o, sizeof(found) - o, "%s [%s] %s\n", rep.v[i].code,
				      diag_severity_name(rep.v[i].severity), rep.v[i].message);
	diag_report_free(&rep);
	return found;
}

START_TEST(test_diagnosis)
{
	struct irq_selector net, none;
	struct diag_irq_section sec[3];
	struct diag_rt_use rt[1];
	struct diag_irq_input in;

	use_copy("vm");
	memset(&net, 0, sizeof(net));
	strcpy(net.net_interface, "eth0");
	memset(&none, 0, sizeof(none));
	strcpy(none.usb_id, "1235:8211");
	memset(sec, 0, sizeof(sec));
	sec[0] = (struct diag_irq_section){ .name = "net", .where = "x.conf:3", .sel = &net, .policy = SCHED_FIFO,
					    .priority = 70 };
	sec[1] = (struct diag_irq_section){ .name = "scarlett", .where = "x.conf:9", .sel = &none, .priority = 90 };
	sec[2] = (struct diag_irq_section){ .kthread = true, .name = "soft", .where = "x.conf:12",
					    .match = "ksoftirqd/*", .policy = SCHED_FIFO, .priority = 2, .has_cpus = true };
	CPU_SET(0, &sec[2].cpus);
	rt[0] = (struct diag_rt_use){ .who = "[rule audio]", .priority = 80 };
	memset(&in, 0, sizeof(in));
	in.sections = sec;
	in.n_sections = 3;
	in.rt = rt;
	in.n_rt = 1;
	diagnose(&in);
	ck_assert_ptr_nonnull(strstr(found, "irq-match [info] [irq net] (x.conf:3) matches irq 38 (virtio2-input.0), "
				     "irq 39 (virtio2-output.0), irq 37 (virtio2-config)"));
	ck_assert_ptr_nonnull(strstr(found, "irq-not-threaded [warning] [irq net]: irq 38"));
	ck_assert_ptr_nonnull(strstr(found, "irq-unmatched [warning] [irq scarlett] (x.conf:9) matches no interrupt now"));
	ck_assert_ptr_nonnull(strstr(found, "kthread-bound [warning] [kthread soft]: ksoftirqd/0, ksoftirqd/1 are bound"));
	ck_assert_ptr_nonnull(strstr(found, "rt-above-irq [warning] [rule audio] (priority 80) is at or above [irq net] "
				     "(priority 70) on CPU 0-1"));
	/* no threadirqs here: ksoftirqd is not where softirqs pile up */
	ck_assert_ptr_null(strstr(found, "rt-above-ksoftirqd"));
	/* with it, a real-time rule above ksoftirqd is; a [kthread] above the rule is not */
	write_file("proc/cmdline", "console=ttyS0 threadirqs quiet\n");
	diagnose(&in);
	ck_assert_ptr_nonnull(strstr(found, "rt-above-ksoftirqd [warning] [rule audio] (priority 80) runs above "
				     "ksoftirqd on CPU 0-1 (priority 2 at most): with threadirqs"));
	sec[2].priority = 81;
	diagnose(&in);
	ck_assert_ptr_null(strstr(found, "rt-above-ksoftirqd"));
	/* a rule below the IRQ thread, or on other CPUs, is fine */
	rt[0].priority = 60;
	diagnose(&in);
	ck_assert_ptr_null(strstr(found, "rt-above-irq"));
	rt[0].priority = 80;
	sec[0].has_cpus = true;
	CPU_ZERO(&sec[0].cpus);
	CPU_SET(1, &sec[0].cpus);
	rt[0].has_cpus = true;
	CPU_ZERO(&rt[0].cpus);
	CPU_SET(0, &rt[0].cpus);
	diagnose(&in);
	ck_assert_ptr_null(strstr(found, "rt-above-irq"));
	/* irq-avoid-cpus over every CPU moves nothing, and says so */
	in.n_sections = 0;
	in.n_rt = 0;
	in.avoid = true;
	in.avoid_text = "0-1";
	CPU_SET(0, &in.avoid_cpus);
	CPU_SET(1, &in.avoid_cpus);
	diagnose(&in);
	ck_assert_ptr_nonnull(strstr(found, "irq-avoid [error] irq-avoid-cpus = 0-1 covers every online CPU"));
	CPU_CLR(0, &in.avoid_cpus);
	in.avoid_text = "1";
	diagnose(&in);
	ck_assert_ptr_nonnull(strstr(found, "irq-avoid [info] irq-avoid-cpus = 1 keeps CPU 1 free of the interrupts no "
				     "[irq] section claims: irq 24 (ACPI:Ged)"));
}
END_TEST

/* ------------------------------------------------------------- config --- */

/* The errors config_load/validate write for text, "" if it is valid. */
static const char *config_errors(const char *text)
{
	static char out[8192];
	char path[PATH_MAX * 2], *err = NULL;
	struct config *c = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);
	int r;

	unit_tmpdir(cfgdir, "test-irq-conf");
	unit_write(cfgdir, "rtschedd.conf", text);
	snprintf(path, sizeof(path), "%s/rtschedd.conf", cfgdir);
	r = config_load_text(path, true, &c, f);
	if (r == 0)
		config_validate_text(c, f, NULL);
	fclose(f);
	config_free(c);
	unit_rmdir(cfgdir);
	snprintf(out, sizeof(out), "%.4000s", err ? err : "");
	free(err);
	return out;
}

START_TEST(test_config)
{
	ck_assert_str_eq(config_errors("[irq a]\nmatch = xhci_hcd\npriority = 90\n[daemon]\nmax-priority = 95\n"), "");
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\nmatch = x\npriority = 90\n"),
				     "rtschedd.conf:3: [irq a]: priority 90 is above max-priority 80"));
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\nmatch = x\ncpus = \n"), "empty CPU list"));
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\npriority = 5\n"), "[irq a]: nothing to match"));
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\nmatch = x\n"), "[irq a]: sets nothing"));
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\nusb-id = 12:34\npriority = 5\n"),
				     "'12:34' is not a device id"));
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\nmatch = x\npolicy = other\npriority = 5\n"),
				     "'other' is not valid for an IRQ thread"));
	ck_assert_ptr_nonnull(strstr(config_errors("[irq a]\nmatch = x\nspread = yes\npriority = 5\n"),
				     "spread needs cpus"));
	ck_assert_ptr_nonnull(strstr(config_errors("[kthread k]\npriority = 5\n"), "[kthread k]: nothing to match"));
	ck_assert_ptr_nonnull(strstr(config_errors("[kthread k]\nmatch = ksoftirqd/*\npolicy = fifo\n"),
				     "policy fifo needs a priority"));
	ck_assert_ptr_nonnull(strstr(config_errors("[kthread k]\nmatch = x\npriority = 99\n"),
				     "priority 99 is not valid for fifo (1..99, at most max-priority 80)"));
	ck_assert_ptr_nonnull(strstr(config_errors("[daemon]\nirq-avoid-cpus = 9999\n"), "irq-avoid-cpus"));
	ck_assert_str_eq(config_errors("[daemon]\nirq-avoid-cpus = auto\n"), "");
	ck_assert_ptr_nonnull(strstr(config_errors("[irqs a]\n"), "[irq NAME] or [kthread NAME]"));
}
END_TEST

int main(void)
{
	/* the manager logs each change; a failure's assertion says what matters */
	log_set_level(LOG_LEVEL_ERR);
	Suite *s = suite_create("irq");
	TCase *p = tcase_create("parse"), *m = tcase_create("match"), *g = tcase_create("manager");

	tcase_add_checked_fixture(p, setup, teardown);
	tcase_add_test(p, test_parse_interrupts);
	tcase_add_test(p, test_queue_of);
	tcase_add_test(p, test_parse_irqbalance_setup);
	tcase_add_test(p, test_parse_uevent);
	tcase_add_test(p, test_config);
	suite_add_tcase(s, p);
	tcase_add_checked_fixture(m, setup, teardown);
	tcase_add_test(m, test_vm_snapshot);
	tcase_add_test(m, test_vm_select);
	tcase_add_test(m, test_desktop_select);
	tcase_add_test(m, test_server_select);
	tcase_add_test(m, test_guest_select);
	suite_add_tcase(s, m);
	tcase_add_checked_fixture(g, mgr_setup, mgr_teardown);
	tcase_add_test(g, test_affinity_set_and_restored);
	tcase_add_test(g, test_irq_thread_priority);
	tcase_add_test(g, test_kthread_sections);
	tcase_add_test(g, test_watch_follows_held_threads);
	tcase_add_test(g, test_guest_usb_priority);
	tcase_add_test(g, test_usb_device_comes_and_goes);
	tcase_add_test(g, test_spread_and_reuse);
	tcase_add_test(g, test_avoid_cpus);
	tcase_add_test(g, test_isolated_cpus);
	tcase_add_test(g, test_isolated_after_crash);
	tcase_add_test(g, test_number_reused_while_avoided);
	tcase_add_test(g, test_journal_after_crash);
	tcase_add_test(g, test_diagnosis);
	suite_add_tcase(s, g);
	return unit_run(s);
}
