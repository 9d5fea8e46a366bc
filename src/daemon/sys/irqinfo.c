/* irqinfo.c: reading the machine's interrupts, their devices and the
 * kernel threads into a snapshot, and writing IRQ affinity (see irqinfo.h). */
#include "autoconfig.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/irqinfo.h"
#include "daemon/sys/kfile.h"

#define INTERRUPTS_MAX (64u << 20)   /* thousands of IRQs times hundreds of CPUs */
#define ATTR_MAX 4096

/* --- /proc/interrupts ------------------------------------------------------------ */

/* The next blank-separated token of the line at *p: its start and length;
 * *p moves past it. 0 length at the end of the line. */
static size_t token(const char **p, const char **start)
{
	const char *s = *p;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strcspn(s, " \t\n");
	*start = s;
	*p = s + n;
	return n;
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Copy n bytes of s into a buffer of len bytes, cut to fit. */
static void copy_cut(char *buf, size_t len, const char *s, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* One "N: counts chip hwirq[-handler] [Level|Edge] actions" line into *l;
 * false for any other line (per-CPU rows like "NMI:", malformed text). */
static bool parse_line(const char *p, int ncpu, struct irq_line *l)
{
	const char *t, *end;
	unsigned long long v;
	size_t n;

	memset(l, 0, sizeof(*l));
	l->hwirq = -1;
	n = token(&p, &t);
	if (n < 2 || t[n - 1] != ':' || !all_digits(t, n - 1) || n - 1 > 9)
		return false;
	l->irq = atoi(t);
	for (int c = 0; c < ncpu; c++) {
		const char *save = p;

		n = token(&p, &t);
		if (!all_digits(t, n) || n > 19) {
			p = save;
			break;
		}
		v = strtoull(t, NULL, 10);
		l->count = l->count + v < l->count ? UINT64_MAX : l->count + v;
	}
	n = token(&p, &t);
	if (n == 0)
		return true;
	copy_cut(l->chip, sizeof(l->chip), t, n);
	/* the hardware number, joined on x86 with the flow handler's name
	 * ("5-edge"); ARM prints Level or Edge as a word of its own */
	const char *save = p;
	n = token(&p, &t);
	if (n > 0 && isdigit((unsigned char)t[0])) {
		size_t d = 0;
		while (d < n && d < 18 && isdigit((unsigned char)t[d]))
			d++;
		if (d == n || t[d] == '-')
			l->hwirq = strtol(t, NULL, 10);
		save = p;
		n = token(&p, &t);
		if (!((n == 5 && memcmp(t, "Level", 5) == 0) || (n == 4 && memcmp(t, "Edge", 4) == 0)))
			p = save;
	} else {
		p = save;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strcspn(p, "\n");
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	copy_cut(l->actions, sizeof(l->actions), p, (size_t)(end - p));
	return true;
}

int irqinfo_parse_interrupts(const char *text, struct irq_line **lines, size_t *n)
{
	const char *p = text, *t;
	struct irq_line *v = NULL, l;
	size_t cap = 0, len;
	int ncpu = 0;

	*lines = NULL;
	*n = 0;
	while ((len = token(&p, &t)) > 0 && *t != '\n')
		if (len > 3 && memcmp(t, "CPU", 3) == 0 && all_digits(t + 3, len - 3))
			ncpu++;
	if (ncpu == 0)
		return -EINVAL;
	while ((p = strchr(p, '\n'))) {
		p++;
		if (!parse_line(p, ncpu, &l))
			continue;
		if (*n == cap) {
			struct irq_line *nv = realloc(v, (cap ? 2 * cap : 64) * sizeof(*v));
			if (!nv) {
				free(v);
				*n = 0;
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? 2 * cap : 64;
		}
		v[(*n)++] = l;
	}
	*lines = v;
	return 0;
}

bool irqinfo_each_action(const char *actions, bool (*fn)(const char *name, void *ud), void *ud)
{
	char name[IRQ_ACTIONS_MAX];
	const char *p = actions;

	while (*p) {
		size_t n = strcspn(p, ",");
		const char *s = p, *e = p + n;

		while (s < e && *s == ' ')
			s++;
		while (e > s && e[-1] == ' ')
			e--;
		if (e > s) {
			copy_cut(name, sizeof(name), s, (size_t)(e - s));
			if (fn(name, ud))
				return true;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

int irqinfo_queue_of(const char *action, const char *ifname)
{
	char buf[IRQ_ACTIONS_MAX];
	size_t n = strcspn(action, "@"), d = 0;
	char *at;

	copy_cut(buf, sizeof(buf), action, n);
	if (ifname && *ifname && (at = strstr(buf, ifname)))
		memmove(at, at + strlen(ifname), strlen(at + strlen(ifname)) + 1);
	n = strlen(buf);
	while (d < n && d < 6 && isdigit((unsigned char)buf[n - 1 - d]))
		d++;
	if (d == 0 || d == 6)
		return -1;
	return atoi(buf + n - d);
}

/* --- files ----------------------------------------------------------------------- */

/* Format ROOT/fmt... into path; -ENAMETOOLONG rather than a cut. */
__attribute__((format(printf, 4, 5)))
static int mkpath(char *path, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(path, len, "%s/", root);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	int m = vsnprintf(path + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= len - (size_t)n ? -ENAMETOOLONG : 0;
}

/* Read a whole small file into buf, trailing newline and blanks removed. */
static int read_attr(const char *path, char *buf, size_t len)
{
	size_t used;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), r;

	if (fd < 0)
		return -errno;
	r = proc_read_fd(fd, buf, len, &used);
	close(fd);
	if (r < 0)
		return r;
	while (used > 0 && isspace((unsigned char)buf[used - 1]))
		buf[--used] = '\0';
	return 0;
}

__attribute__((format(printf, 4, 5)))
static int read_attrf(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	char path[PATH_MAX], rel[PATH_MAX];
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	if ((r = mkpath(path, sizeof(path), root, "%s", rel)) < 0)
		return r;
	return read_attr(path, buf, len);
}

static const char *root_proc(const struct irq_env *env)
{
	return env && env->proc ? env->proc : "/proc";
}

static const char *root_sys(const struct irq_env *env)
{
	return env && env->sys ? env->sys : "/sys";
}

/* --- the snapshot ------------------------------------------------------------------ */

int irqinfo_read_affinity(const struct irq_env *env, int irq, cpu_set_t *affinity, cpu_set_t *effective)
{
	char buf[ATTR_MAX];
	int r;

	if ((r = read_attrf(buf, sizeof(buf), root_proc(env), "irq/%d/smp_affinity_list", irq)) < 0 ||
	    (r = cpulist_parse(buf, affinity, NULL)) < 0)
		return r;
	/* before Linux 4.15, or a chip without one: the affinity is all there is */
	if (read_attrf(buf, sizeof(buf), root_proc(env), "irq/%d/effective_affinity_list", irq) < 0 ||
	    cpulist_parse(buf, effective, NULL) < 0 || CPU_COUNT(effective) == 0)
		*effective = *affinity;
	return 0;
}

/* "a,b" (sysfs) as "a, b" (/proc/interrupts). */
static void actions_from_sysfs(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 3 < len; p++) {
		out[o++] = *p;
		if (*p == ',')
			out[o++] = ' ';
	}
	out[o] = '\0';
}

/* /proc/interrupts, read and parsed. */
static int read_interrupts(const struct irq_env *env, struct irq_line **lines, size_t *n)
{
	char path[PATH_MAX], *text;
	int r;

	if ((r = mkpath(path, sizeof(path), root_proc(env), "interrupts")) < 0 ||
	    (r = proc_read_alloc(path, INTERRUPTS_MAX, &text)) < 0)
		return r;
	r = irqinfo_parse_interrupts(text, lines, n);
	free(text);
	return r;
}

int irqinfo_read_actions(const struct irq_env *env, int irq, char *buf, size_t len)
{
	char raw[IRQ_ACTIONS_MAX];
	struct irq_line *lines;
	size_t n;
	int r;

	buf[0] = '\0';
	if (read_attrf(raw, sizeof(raw), root_sys(env), "kernel/irq/%d/actions", irq) == 0) {
		actions_from_sysfs(raw, buf, len);
		return 0;
	}
	if ((r = read_interrupts(env, &lines, &n)) < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (lines[i].irq == irq)
			snprintf(buf, len, "%s", lines[i].actions);
	free(lines);
	return 0;
}

static int cmp_desc(const void *a, const void *b)
{
	const struct irq_desc *x = a, *y = b;

	return (x->line.irq > y->line.irq) - (x->line.irq < y->line.irq);
}

const struct irq_desc *irqinfo_find(const struct irq_snapshot *s, int irq)
{
	struct irq_desc key;

	key.line.irq = irq;
	return s->n_irqs ? bsearch(&key, s->irqs, s->n_irqs, sizeof(key), cmp_desc) : NULL;
}

static int read_irqs(const struct irq_env *env, struct irq_snapshot *s)
{
	char buf[ATTR_MAX];
	struct irq_line *lines;
	size_t n;
	int r;

	if ((r = read_interrupts(env, &lines, &n)) < 0)
		return r;
	s->irqs = calloc(n ? n : 1, sizeof(*s->irqs));
	if (!s->irqs) {
		free(lines);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct irq_desc *d = &s->irqs[s->n_irqs];

		d->line = lines[i];
		/* sysfs has the exact names (no column guessing), the chip and hwirq */
		if (read_attrf(buf, sizeof(buf), root_sys(env), "kernel/irq/%d/actions", d->line.irq) == 0) {
			s->have_sysfs_irq = true;
			actions_from_sysfs(buf, d->line.actions, sizeof(d->line.actions));
			if (read_attrf(buf, sizeof(buf), root_sys(env), "kernel/irq/%d/chip_name", d->line.irq) == 0)
				copy_cut(d->line.chip, sizeof(d->line.chip), buf, strlen(buf));
			if (read_attrf(buf, sizeof(buf), root_sys(env), "kernel/irq/%d/hwirq", d->line.irq) == 0 &&
			    all_digits(buf, strlen(buf)) && strlen(buf) < 19)
				d->line.hwirq = strtol(buf, NULL, 10);
		}
		if (!d->line.actions[0])
			continue;
		d->has_affinity = irqinfo_read_affinity(env, d->line.irq, &d->affinity, &d->effective) == 0;
		d->has_effective = d->has_affinity;
		s->n_irqs++;
	}
	free(lines);
	qsort(s->irqs, s->n_irqs, sizeof(*s->irqs), cmp_desc);
	return 0;
}

/* Resolve dir/name to a path below the sysfs root into out ("" if it
 * leads outside or does not fit). */
static void sys_resolve(const char *sysroot_real, const char *path, char *out, size_t len)
{
	char real[PATH_MAX];
	size_t rl = strlen(sysroot_real);

	out[0] = '\0';
	if (!realpath(path, real) || strncmp(real, sysroot_real, rl) != 0 || (real[rl] != '/' && real[rl]))
		return;
	if (strlen(real + rl) < len)
		strcpy(out, real + rl);
}

/* The basename of the link dir/driver, "" if none. */
static void read_driver(const char *dir, char *out, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	out[0] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/driver", dir) >= sizeof(path))
		return;
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	const char *b = strrchr(link, '/');
	b = b ? b + 1 : link;
	copy_cut(out, len, b, strlen(b));
}

static unsigned read_hex(const char *dir, const char *name)
{
	char path[PATH_MAX], buf[64];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    read_attr(path, buf, sizeof(buf)) < 0)
		return 0;
	return (unsigned)strtoul(buf, NULL, 16);
}

static struct irq_dev *add_dev(struct irq_snapshot *s, size_t *cap)
{
	if (s->n_devs == *cap) {
		size_t nc = *cap ? 2 * *cap : 32;
		struct irq_dev *nd = realloc(s->devs, nc * sizeof(*nd));
		if (!nd)
			return NULL;
		s->devs = nd;
		*cap = nc;
	}
	struct irq_dev *d = &s->devs[s->n_devs];
	memset(d, 0, sizeof(*d));
	d->busnum = -1;
	d->card = -1;
	return d;
}

/* Own IRQ irq by device dev as vector `vector`. */
static void add_owner(struct irq_snapshot *s, int irq, int dev, int vector)
{
	struct irq_desc *d = (struct irq_desc *)irqinfo_find(s, irq);

	if (d && d->n_owners < IRQ_OWNERS_MAX) {
		d->owner[d->n_owners++] = (struct irq_owner){ dev, vector };
		s->devs[dev].has_irqs = true;
	}
}

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The vectors of a PCI device: msi_irqs/ (ordered by number, the index a
 * one-call allocation gives them; a per-device MSI domain's hwirq is the
 * index itself), or its legacy line. */
static void pci_vectors(struct irq_snapshot *s, const char *dir, int dev)
{
	char path[PATH_MAX], buf[64];
	int irqs[4096];
	size_t n = 0;
	DIR *dd;
	struct dirent *e;

	if ((size_t)snprintf(path, sizeof(path), "%s/msi_irqs", dir) < sizeof(path) && (dd = opendir(path))) {
		while ((e = readdir(dd)) && n < sizeof(irqs) / sizeof(irqs[0]))
			if (all_digits(e->d_name, strlen(e->d_name)) && strlen(e->d_name) < 9)
				irqs[n++] = atoi(e->d_name);
		closedir(dd);
	}
	if (n) {
		qsort(irqs, n, sizeof(irqs[0]), cmp_int);
		for (size_t i = 0; i < n; i++) {
			const struct irq_desc *d = irqinfo_find(s, irqs[i]);
			int vector = (int)i;

			if (d && strncmp(d->line.chip, "PCI-MSI", 7) == 0 && strchr(d->line.chip + 7, ':') &&
			    d->line.hwirq >= 0 && d->line.hwirq < 65536)
				vector = (int)d->line.hwirq;
			add_owner(s, irqs[i], dev, vector);
		}
		return;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/irq", dir) < sizeof(path) && read_attr(path, buf, sizeof(buf)) == 0 &&
	    all_digits(buf, strlen(buf)) && strlen(buf) < 9 && atoi(buf) > 0)
		add_owner(s, atoi(buf), dev, -1);
}

/* Every entry of sys/SUB: fn(dir path, entry name) for each. */
static int each_entry(const char *sys, const char *sub, void (*fn)(struct irq_snapshot *, const char *, const char *,
								   const char *, size_t *),
		      struct irq_snapshot *s, const char *sysreal, size_t *cap)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct dirent *e;
	DIR *dd;
	int r;

	if ((r = mkpath(dir, sizeof(dir), sys, "%s", sub)) < 0)
		return r;
	if (!(dd = opendir(dir)))
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dd))) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		fn(s, path, e->d_name, sysreal, cap);
	}
	closedir(dd);
	return 0;
}

/* A device of kind at dir (a link into /sys/devices), named name, with its
 * driver; NULL when it cannot be added (its path leads outside sysfs, or
 * no memory). The caller fills the rest and counts it. */
static struct irq_dev *dev_at(struct irq_snapshot *s, enum irq_dev_kind kind, const char *dir, const char *name,
			      const char *sysreal, size_t *cap)
{
	struct irq_dev *d = add_dev(s, cap);

	if (!d)
		return NULL;
	d->kind = kind;
	sys_resolve(sysreal, dir, d->path, sizeof(d->path));
	if (!d->path[0])
		return NULL;
	copy_cut(d->name, sizeof(d->name), name, strlen(name));
	read_driver(dir, d->driver, sizeof(d->driver));
	return d;
}

static void on_pci(struct irq_snapshot *s, const char *path, const char *name, const char *sysreal, size_t *cap)
{
	struct irq_dev *d = dev_at(s, IRQ_DEV_PCI, path, name, sysreal, cap);

	if (!d)
		return;
	d->vendor = read_hex(path, "vendor");
	d->product = read_hex(path, "device");
	s->n_devs++;
	pci_vectors(s, path, (int)s->n_devs - 1);
}

static void on_usb(struct irq_snapshot *s, const char *path, const char *name, const char *sysreal, size_t *cap)
{
	char p[PATH_MAX], buf[64];
	struct irq_dev *d;

	/* devices, not their interfaces ("1-1:1.0") */
	if ((size_t)snprintf(p, sizeof(p), "%s/idVendor", path) >= sizeof(p) || access(p, F_OK) < 0 ||
	    !(d = dev_at(s, IRQ_DEV_USB, path, name, sysreal, cap)))
		return;
	d->vendor = read_hex(path, "idVendor");
	d->product = read_hex(path, "idProduct");
	if ((size_t)snprintf(p, sizeof(p), "%s/busnum", path) < sizeof(p) && read_attr(p, buf, sizeof(buf)) == 0 &&
	    all_digits(buf, strlen(buf)) && strlen(buf) < 6)
		d->busnum = atoi(buf);
	s->n_devs++;
}

static void on_sound(struct irq_snapshot *s, const char *path, const char *name, const char *sysreal, size_t *cap)
{
	char p[PATH_MAX];
	struct irq_dev *d;

	if (strncmp(name, "card", 4) != 0 || !all_digits(name + 4, strlen(name + 4)) || strlen(name) > 10 ||
	    (size_t)snprintf(p, sizeof(p), "%s/device", path) >= sizeof(p) ||
	    !(d = dev_at(s, IRQ_DEV_SOUND, p, name, sysreal, cap)))
		return;
	d->card = atoi(name + 4);
	/* named by its id ("USB", "PCH"), as /proc/asound/cards shows it */
	if ((size_t)snprintf(p, sizeof(p), "%s/id", path) < sizeof(p))
		read_attr(p, d->name, sizeof(d->name));
	s->n_devs++;
}

static void on_net(struct irq_snapshot *s, const char *path, const char *name, const char *sysreal, size_t *cap)
{
	char p[PATH_MAX];
	struct irq_dev *d;

	if ((size_t)snprintf(p, sizeof(p), "%s/device", path) >= sizeof(p) || access(p, F_OK) < 0 ||
	    !(d = dev_at(s, IRQ_DEV_NET, p, name, sysreal, cap)))
		return;
	s->n_devs++;
}

/* Is dir, component by component, a prefix of path (or path itself)? */
static bool under(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	return n > 0 && strncmp(dir, path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool irqinfo_has_word(const char *text, const char *name)
{
	size_t n = strlen(name);

	if (!n)
		return false;
	for (const char *p = text; (p = strstr(p, name)); p++)
		if ((p == text || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
			return true;
	return false;
}

/* Each device's nearest vector-owning device and USB device (the deepest
 * paths it sits below), and whether a network interface has vectors named
 * after it. */
static void link_devices(struct irq_snapshot *s)
{
	for (size_t i = 0; i < s->n_devs; i++) {
		struct irq_dev *d = &s->devs[i];
		size_t own = 0, usb = 0;

		d->owner = d->usb = -1;
		for (size_t j = 0; j < s->n_devs; j++) {
			const struct irq_dev *a = &s->devs[j];
			size_t l = strlen(a->path);

			if (a->has_irqs && l > own && under(a->path, d->path)) {
				d->owner = (int)j;
				own = l;
			}
			if (a->kind == IRQ_DEV_USB && l > usb && under(a->path, d->path)) {
				d->usb = (int)j;
				usb = l;
			}
		}
		if (d->kind != IRQ_DEV_NET || d->owner < 0)
			continue;
		for (size_t q = 0; q < s->n_irqs && !d->named; q++)
			for (int o = 0; o < s->irqs[q].n_owners; o++)
				if (s->irqs[q].owner[o].dev == d->owner && irqinfo_has_word(s->irqs[q].line.actions, d->name))
					d->named = true;
	}
}

static int read_devices(const struct irq_env *env, struct irq_snapshot *s)
{
	char sysreal[PATH_MAX];
	size_t cap = 0;
	int r;

	if (!realpath(root_sys(env), sysreal))
		return -errno;
	if (strcmp(sysreal, "/") == 0)
		sysreal[0] = '\0';
	if ((r = each_entry(root_sys(env), "bus/pci/devices", on_pci, s, sysreal, &cap)) < 0 ||
	    (r = each_entry(root_sys(env), "bus/usb/devices", on_usb, s, sysreal, &cap)) < 0 ||
	    (r = each_entry(root_sys(env), "class/sound", on_sound, s, sysreal, &cap)) < 0 ||
	    (r = each_entry(root_sys(env), "class/net", on_net, s, sysreal, &cap)) < 0)
		return r;
	link_devices(s);
	return 0;
}

int irqinfo_read_kthread(const struct irq_env *env, pid_t tid, struct irq_kthread *k)
{
	char buf[2048], cut[2048];
	const char *open, *close;
	struct proc_stat st;
	size_t n;
	int r;

	if ((r = read_attrf(buf, sizeof(buf), root_proc(env), "%d/stat", (int)tid)) < 0)
		return r == -ENOENT ? -ESRCH : r;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || (n = (size_t)(close - open - 1)) > IRQ_KTHREAD_NAME_MAX)
		return -EINVAL;
	/* the numbers through proc_parse_stat, with the name cut to what it takes */
	if ((size_t)snprintf(cut, sizeof(cut), "%.*s%.*s%s", (int)(open - buf + 1), buf,
			     (int)(n < PROC_COMM_MAX ? n : PROC_COMM_MAX), open + 1, close) >= sizeof(cut) ||
	    (r = proc_parse_stat(cut, &st)) < 0)
		return r < 0 ? r : -EINVAL;
	if (!(st.flags & PROC_PF_KTHREAD))
		return -EPERM;
	memset(k, 0, sizeof(*k));
	k->tid = st.tid;
	k->starttime = st.starttime;
	copy_cut(k->comm, sizeof(k->comm), open + 1, n);
	k->flags = st.flags;
	k->policy = st.policy & ~0x40000000;
	k->priority = st.rt_priority;
	k->nice = st.nice;
	k->irq = -1;
	/* "irq/N-name", and forced threading's secondary "irq/N-s-name" */
	if (strncmp(k->comm, "irq/", 4) == 0) {
		size_t d = strspn(k->comm + 4, "0123456789");
		if (d > 0 && d < 9 && k->comm[4 + d] == '-')
			k->irq = atoi(k->comm + 4);
	}
	return 0;
}

static int cmp_kthread(const void *a, const void *b)
{
	const struct irq_kthread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int read_kthreads(const struct irq_env *env, struct irq_snapshot *s)
{
	const char *proc = root_proc(env);
	size_t cap = 0;
	struct dirent *e;
	DIR *dd;

	if (!(dd = opendir(proc)))
		return -errno;
	while ((e = readdir(dd))) {
		struct irq_kthread k;
		const char *n = e->d_name;

		/* kthreadd's children; a task that exits meanwhile is skipped */
		if (!all_digits(n, strlen(n)) || strlen(n) > 9 || irqinfo_read_kthread(env, atoi(n), &k) < 0)
			continue;
		if (s->n_kthreads == cap) {
			size_t nc = cap ? 2 * cap : 128;
			struct irq_kthread *nk = realloc(s->kthreads, nc * sizeof(*nk));
			if (!nk) {
				closedir(dd);
				return -ENOMEM;
			}
			s->kthreads = nk;
			cap = nc;
		}
		s->kthreads[s->n_kthreads++] = k;
	}
	closedir(dd);
	/* in tid order: what the sections match does not depend on readdir's */
	if (s->n_kthreads)
		qsort(s->kthreads, s->n_kthreads, sizeof(*s->kthreads), cmp_kthread);
	return 0;
}

int irqinfo_read(const struct irq_env *env, unsigned what, struct irq_snapshot *s)
{
	char buf[ATTR_MAX];
	int r;

	memset(s, 0, sizeof(*s));
	if (read_attrf(buf, sizeof(buf), root_sys(env), "devices/system/cpu/online") < 0 ||
	    cpulist_parse(buf, &s->online, NULL) < 0)
		CPU_ZERO(&s->online);
	if ((r = read_irqs(env, s)) < 0)
		return r;
	if ((what & IRQINFO_DEVICES) && (r = read_devices(env, s)) < 0)
		return r;
	if ((what & IRQINFO_KTHREADS) && (r = read_kthreads(env, s)) < 0)
		return r;
	return 0;
}

void irqinfo_free(struct irq_snapshot *s)
{
	free(s->irqs);
	free(s->devs);
	free(s->kthreads);
	memset(s, 0, sizeof(*s));
}

/* --- writing ------------------------------------------------------------------------ */

/* Write text to ROOT/rel in one write(2) (kfile_write): procfs takes the
 * value whole. What open(2) refuses is the file's permission (-EACCES,
 * -EROFS); what write(2) refuses is the kernel's answer to the value. */
static int write_text(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	int r;

	if ((r = mkpath(path, sizeof(path), root, "%s", rel)) < 0)
		return r;
	return kfile_write(AT_FDCWD, path, text);
}

int irqinfo_write_affinity(const struct irq_env *env, int irq, const cpu_set_t *cpus)
{
	char rel[64], text[ATTR_MAX], path[PATH_MAX];
	int r;

	if (CPU_COUNT(cpus) == 0)
		return -EINVAL;
	if ((r = cpulist_format(cpus, text, sizeof(text) - 1)) < 0)
		return r;
	strcat(text, "\n");
	snprintf(rel, sizeof(rel), "irq/%d/smp_affinity_list", irq);
	r = write_text(root_proc(env), rel, text);
	/* the kernel says a vector cannot be moved with EIO (older kernels) or
	 * EPERM (newer ones: irq_can_set_affinity_usr() false, managed or
	 * per-CPU); a
	 * permission problem shows at open(2), where it is EACCES or EROFS */
	if (r == -EPERM && mkpath(path, sizeof(path), root_proc(env), "%s", rel) == 0 && access(path, W_OK) == 0)
		r = -EIO;
	return r;
}

int irqinfo_read_default_affinity(const struct irq_env *env, cpu_set_t *cpus)
{
	char buf[ATTR_MAX];
	int r, bit = 0;

	if ((r = read_attrf(buf, sizeof(buf), root_proc(env), "irq/default_smp_affinity")) < 0)
		return r;
	CPU_ZERO(cpus);
	/* hexadecimal, most significant first, groups of 32 bits split by ',' */
	for (size_t i = strlen(buf); i-- > 0;) {
		char c = buf[i];
		if (c == ',')
			continue;
		if (!isxdigit((unsigned char)c))
			return -EINVAL;
		int v = isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
		for (int b = 0; b < 4; b++, bit++)
			if ((v >> b) & 1) {
				if (bit >= CPU_SETSIZE)
					return -ERANGE;
				CPU_SET(bit, cpus);
			}
	}
	return 0;
}

int irqinfo_write_default_affinity(const struct irq_env *env, const cpu_set_t *cpus)
{
	char text[CPU_SETSIZE / 4 + CPU_SETSIZE / 32 + 4];
	size_t o = 0;
	int top = -1;

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus))
			top = c;
	if (top < 0)
		return -EINVAL;
	for (int g = top / 32; g >= 0; g--) {
		unsigned v = 0;
		for (int b = 0; b < 32; b++)
			if (CPU_ISSET(g * 32 + b, cpus))
				v |= 1u << b;
		o += (size_t)snprintf(text + o, sizeof(text) - o, g == top / 32 ? "%x%s" : "%08x%s", v, g ? "," : "\n");
	}
	return write_text(root_proc(env), "irq/default_smp_affinity", text);
}

int irqinfo_find_irqbalance(const char *rundir, pid_t *pid, char *sock, size_t len)
{
	struct dirent *e;
	DIR *d = opendir(rundir);
	int found = -ENOENT;

	if (!d)
		return -ENOENT;
	while ((e = readdir(d)) && found < 0) {
		char comm[32];
		int p, end = 0;

		if (sscanf(e->d_name, "irqbalance%d.sock%n", &p, &end) != 1 || e->d_name[end] != '\0' || p <= 0)
			continue;
		/* a socket left by an irqbalance that died is not an irqbalance */
		if (proc_read_comm(p, 0, comm, sizeof(comm)) < 0 || strcmp(comm, "irqbalance") != 0)
			continue;
		if ((size_t)snprintf(sock, len, "%s/%s", rundir, e->d_name) >= len)
			continue;
		*pid = p;
		found = 0;
	}
	closedir(d);
	return found;
}

int irqinfo_managed(const struct irq_env *env, int irq)
{
	char path[PATH_MAX], *text;
	int r;

	if ((r = mkpath(path, sizeof(path), root_sys(env), "kernel/debug/irq/irqs/%d", irq)) < 0)
		return r;
	if (proc_read_alloc(path, 1u << 20, &text) < 0)
		return -ENOENT;
	r = strstr(text, "AFFINITY_MANAGED") != NULL;
	free(text);
	return r;
}
