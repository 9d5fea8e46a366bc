/* irqselect.c: which IRQs an [irq NAME] selector matches (see irqinfo.h).
 *
 * An IRQ serves the devices that own it (PCI devices, through msi_irqs/ or
 * their legacy line) and the devices below them in sysfs, with two cuts:
 *  - a device behind USB (a USB device, a USB sound card, a USB network
 *    adapter) is served by its host controller's first vector only: xHCI
 *    raises every transfer event on its primary interrupter, vector 0,
 *    though the driver may request one vector per CPU with the same name
 *    (6.1's xhci_hcd asks for up to 25 on a 24-CPU machine); a controller
 *    whose driver names its line "driver:usbN" (EHCI, platform xHCI) serves
 *    bus N;
 *  - a network interface whose driver names vectors after it
 *    ("eth0-TxRx-3") is served by those vectors only, not by the device's
 *    other functions' vectors; its queue number is the name's trailing
 *    number (irqinfo_queue_of()).
 * Every key the selector sets must hold for the IRQ. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/irqinfo.h"

/* An action "driver:usbN" of IRQ q, for bus N. */
static bool names_bus(const struct irq_desc *q, int bus)
{
	char want[24];

	snprintf(want, sizeof(want), ":usb%d", bus);
	for (const char *p = q->line.actions; (p = strstr(p, want)); p++) {
		char end = p[strlen(want)];
		if (end == '\0' || end == ',' || end == ' ')
			return true;
	}
	return false;
}

/* Does IRQ q serve device d? Through its nearest vector-owning device
 * only: a PCIe root port's own vector serves nothing behind it. */
static bool serves(const struct irq_snapshot *s, const struct irq_desc *q, const struct irq_dev *d)
{
	const struct irq_dev *usb = d->usb >= 0 ? &s->devs[d->usb] : NULL;

	for (int o = 0; o < q->n_owners; o++) {
		if (q->owner[o].dev != d->owner)
			continue;
		if (&s->devs[d->owner] == d)
			return true;
		if (usb)
			return q->owner[o].vector <= 0;
		if (d->kind == IRQ_DEV_NET && d->named)
			return irqinfo_has_word(q->line.actions, d->name);
		return true;
	}
	return usb && usb->busnum >= 0 && names_bus(q, usb->busnum);
}

struct action_glob {
	const char *glob;
};

static bool action_matches(const char *name, void *ud)
{
	return fnmatch(((struct action_glob *)ud)->glob, name, 0) == 0;
}

/* A device key: does d satisfy it? */
static bool dev_key(const struct irq_selector *sel, int key, const struct irq_dev *d)
{
	char buf[IRQ_DEV_PATH_MAX + 8];

	switch (key) {
	case 0:
		return fnmatch(sel->driver, d->driver, 0) == 0;
	case 1:
		snprintf(buf, sizeof(buf), "/sys%s", d->path);
		return fnmatch(sel->device, buf, 0) == 0;
	case 2:
		snprintf(buf, sizeof(buf), "%04x:%04x", d->vendor, d->product);
		return d->kind == IRQ_DEV_USB && fnmatch(sel->usb_id, buf, 0) == 0;
	case 3:
		snprintf(buf, sizeof(buf), "%d", d->card);
		return d->kind == IRQ_DEV_SOUND && (fnmatch(sel->sound_card, d->name, 0) == 0 ||
						    fnmatch(sel->sound_card, buf, 0) == 0);
	default:
		return d->kind == IRQ_DEV_NET && fnmatch(sel->net_interface, d->name, 0) == 0;
	}
}

/* Whether sel matches IRQ q; *queue gets its queue number (-1 if none). */
static bool selected(const struct irq_snapshot *s, const struct irq_selector *sel, const struct irq_desc *q,
		     int *queue)
{
	const char *keys[5] = { sel->driver, sel->device, sel->usb_id, sel->sound_card, sel->net_interface };
	const char *ifname = NULL;
	char buf[32];

	if (sel->match[0]) {
		struct action_glob g = { sel->match };
		if (!irqinfo_each_action(q->line.actions, action_matches, &g))
			return false;
	}
	if (sel->pci_id[0]) {
		bool ok = false;
		for (int o = 0; o < q->n_owners && !ok; o++) {
			const struct irq_dev *od = &s->devs[q->owner[o].dev];
			snprintf(buf, sizeof(buf), "%04x:%04x", od->vendor, od->product);
			ok = fnmatch(sel->pci_id, buf, 0) == 0;
		}
		if (!ok)
			return false;
	}
	bool need = false;
	for (int k = 0; k < 5; k++)
		need |= keys[k][0] != '\0';
	if (need || sel->has_queues) {
		bool held[5] = { false };
		for (size_t i = 0; i < s->n_devs; i++) {
			const struct irq_dev *d = &s->devs[i];

			if (!serves(s, q, d))
				continue;
			if (d->kind == IRQ_DEV_NET && !ifname)
				ifname = d->name;
			for (int k = 0; k < 5; k++)
				held[k] |= keys[k][0] && dev_key(sel, k, d);
		}
		for (int k = 0; k < 5; k++)
			if (keys[k][0] && !held[k])
				return false;
	}
	*queue = irqinfo_queue_of(q->line.actions, ifname);
	return !sel->has_queues || (*queue >= 0 && *queue < CPU_SETSIZE && CPU_ISSET(*queue, &sel->queues));
}

struct pick {
	int queue, irq;
};

static int cmp_pick(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;
	unsigned qx = (unsigned)x->queue, qy = (unsigned)y->queue; /* -1 last */

	if (qx != qy)
		return qx < qy ? -1 : 1;
	return (x->irq > y->irq) - (x->irq < y->irq);
}

int irqinfo_select(const struct irq_snapshot *s, const struct irq_selector *sel, int **irqs, size_t *n)
{
	struct pick *p = calloc(s->n_irqs ? s->n_irqs : 1, sizeof(*p));
	size_t k = 0;

	*irqs = NULL;
	*n = 0;
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_irqs; i++) {
		int queue;

		if (selected(s, sel, &s->irqs[i], &queue))
			p[k++] = (struct pick){ queue, s->irqs[i].line.irq };
	}
	qsort(p, k, sizeof(*p), cmp_pick);
	*irqs = malloc((k ? k : 1) * sizeof(**irqs));
	if (!*irqs) {
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++)
		(*irqs)[i] = p[i].irq;
	*n = k;
	free(p);
	return 0;
}

void irqinfo_served(const struct irq_snapshot *s, int irq, char *buf, size_t len)
{
	const struct irq_desc *q = irqinfo_find(s, irq);
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; q && i < s->n_devs && off + 1 < len; i++) {
		const struct irq_dev *d = &s->devs[i];
		int w;

		if (!serves(s, q, d))
			continue;
		if (d->kind == IRQ_DEV_USB)
			w = snprintf(buf + off, len - off, "%susb %s %04x:%04x", off ? ", " : "", d->name, d->vendor,
				     d->product);
		else if (d->kind == IRQ_DEV_SOUND)
			w = snprintf(buf + off, len - off, "%scard %d %s", off ? ", " : "", d->card, d->name);
		else
			w = snprintf(buf + off, len - off, "%s%s%s%s%s", off ? ", " : "", d->kind == IRQ_DEV_NET ? "net " : "",
				     d->name, d->driver[0] ? " " : "", d->driver);
		if (w < 0 || (size_t)w >= len - off) {
			buf[off] = '\0';
			break;
		}
		off += (size_t)w;
	}
}
