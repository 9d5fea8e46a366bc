/* irqbalance.c: telling a running irqbalance what to leave alone (see
 * irqbalance.h). Journal line: "B 0 pid starttime cpus irqs", irqbalance's
 * own banned CPUs ("-" none) and IRQs ("-" none, else comma-separated), as
 * they were before rtschedd added to them. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/core/state.h"
#include "daemon/irq/irqbalance.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/irqinfo.h"
#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"

/* irqbalance reads one message of up to 500 bytes */
#define IB_MSG_MAX 480
#define IB_REPLY_MAX 65536
#define IB_IRQS_MAX 400

struct irqbalance {
	pid_t pid;
	uint64_t starttime;
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	cpu_set_t own_cpus;            /* what irqbalance banned before rtschedd */
	char own_irqs[IB_IRQS_MAX];    /* "30 31", "" */
	cpu_set_t sent_cpus;           /* what rtschedd told it last */
	char sent_irqs[IB_MSG_MAX];
	bool told;                     /* settings sent that differ from its own */
	int error;                     /* why it cannot be told, 0 */
	struct state *state;
};

int irqbalance_ask(const char *sock, const char *cmd, char *reply, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred = { getpid(), geteuid(), getegid() };
	char ctl[CMSG_SPACE(sizeof(cred))];
	struct iovec iov = { (void *)cmd, strlen(cmd) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	size_t used = 0;
	int fd, r = 0;

	if (strlen(sock) >= sizeof(sa.sun_path) || strlen(cmd) > IB_MSG_MAX)
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, sock);
	memset(ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(c), &cred, sizeof(cred));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || sendmsg(fd, &msg, MSG_NOSIGNAL) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (reply && len) {
		/* the reply ends when irqbalance closes; a hung irqbalance costs 2 s */
		struct pollfd p = { fd, POLLIN, 0 };
		while (used + 1 < len && poll(&p, 1, 2000) == 1) {
			ssize_t n = read(fd, reply + used, len - 1 - used);
			if (n <= 0)
				break;
			used += (size_t)n;
		}
		reply[used] = '\0';
		if (used == 0)
			r = -EACCES;
	}
	close(fd);
	return r;
}

int irqbalance_parse_setup(const char *reply, cpu_set_t *cpus, char *irqs, size_t len)
{
	const char *b = strstr(reply, "BANNED ");
	size_t o = 0;
	int bit = 0;

	if (strncmp(reply, "SLEEP ", 6) != 0 || !b)
		return -EINVAL;
	CPU_ZERO(cpus);
	b += 7;
	size_t n = strspn(b, "0123456789abcdefABCDEF,");
	for (size_t i = n; i-- > 0;) {
		if (b[i] == ',')
			continue;
		int v = isdigit((unsigned char)b[i]) ? b[i] - '0' : tolower((unsigned char)b[i]) - 'a' + 10;
		for (int k = 0; k < 4; k++, bit++)
			if ((v >> k) & 1 && bit < CPU_SETSIZE)
				CPU_SET(bit, cpus);
	}
	irqs[0] = '\0';
	for (const char *p = reply; (p = strstr(p, "IRQ ")); p += 4) {
		int irq;
		if (sscanf(p + 4, "%d", &irq) == 1 && irq >= 0 && o + 12 < len)
			o += (size_t)snprintf(irqs + o, len - o, "%s%d", o ? " " : "", irq);
	}
	return 0;
}

static uint64_t starttime_of(pid_t pid)
{
	struct proc_stat st;

	return proc_read_stat_at(NULL, pid, 0, &st) == 0 ? st.starttime : 0;
}

/* Its journal line: what irqbalance had before rtschedd told it anything. */
static void line(FILE *f, const void *arg)
{
	const struct irqbalance *ib = arg;
	char cpus[1024] = "-", irqs[IB_IRQS_MAX + 2] = "-";

	if (CPU_COUNT(&ib->own_cpus))
		cpulist_format(&ib->own_cpus, cpus, sizeof(cpus));
	if (ib->own_irqs[0]) {
		snprintf(irqs, sizeof(irqs), "%s", ib->own_irqs);
		for (char *p = irqs; *p; p++)
			if (*p == ' ')
				*p = ',';
	}
	fprintf(f, "B 0 %d %" PRIu64 " %s %s\n", (int)ib->pid, ib->starttime, cpus, irqs);
}

size_t irqbalance_journal(const struct irqbalance *ib, FILE *f)
{
	if (!ib || !ib->told || ib->error)
		return 0;
	line(f, ib);
	return 1;
}

static void journal(struct irqbalance *ib)
{
	state_put_with(ib->state, line, ib);
}

void irqbalance_adopt(struct irqbalance **ibp, char *line)
{
	struct irqbalance *ib = calloc(1, sizeof(*ib));
	char cpus[1024], irqs[IB_IRQS_MAX];
	int pid;
	uint64_t st;

	if (!ib || sscanf(line, "B 0 %d %" SCNu64 " %1023s %399s", &pid, &st, cpus, irqs) != 4 || pid <= 0 ||
	    (strcmp(cpus, "-") && cpulist_parse(cpus, &ib->own_cpus, NULL) < 0)) {
		free(ib);
		return;
	}
	ib->pid = pid;
	ib->starttime = st;
	if (strcmp(irqs, "-"))
		for (size_t i = 0; i <= strlen(irqs); i++)
			ib->own_irqs[i] = irqs[i] == ',' ? ' ' : irqs[i];
	ib->told = true;
	irqbalance_free(*ibp, false);
	*ibp = ib;
}

/* Send settings unless they are what irqbalance has from rtschedd already. */
static int tell(struct irqbalance *ib, const cpu_set_t *cpus, const char *irqs)
{
	char cmd[IB_MSG_MAX + 1], list[IB_MSG_MAX - 16];
	int r;

	if (!ib->told || !CPU_EQUAL(cpus, &ib->sent_cpus)) {
		if (CPU_COUNT(cpus) == 0)
			snprintf(list, sizeof(list), "NULL");
		else if (cpulist_format(cpus, list, sizeof(list)) < 0)
			return -ENOSPC;
		snprintf(cmd, sizeof(cmd), "settings cpus %s", list);
		if ((r = irqbalance_ask(ib->sock, cmd, NULL, 0)) < 0)
			return r;
		ib->sent_cpus = *cpus;
	}
	if (!ib->told || strcmp(irqs, ib->sent_irqs) != 0) {
		snprintf(cmd, sizeof(cmd), "settings ban irqs %s", irqs[0] ? irqs : "NONE");
		if ((r = irqbalance_ask(ib->sock, cmd, NULL, 0)) < 0)
			return r;
		snprintf(ib->sent_irqs, sizeof(ib->sent_irqs), "%s", irqs);
	}
	ib->told = true;
	return 0;
}

int irqbalance_sync(struct irqbalance **ibp, const char *rundir, struct state *st, const cpu_set_t *avoid,
		    const int *claimed, size_t n)
{
	struct irqbalance *ib = *ibp;
	char sock[sizeof(ib->sock)], reply[IB_REPLY_MAX], irqs[IB_MSG_MAX];
	pid_t pid;
	int r;

	if (irqinfo_find_irqbalance(rundir ? rundir : IRQBALANCE_RUNDIR, &pid, sock, sizeof(sock)) < 0) {
		if (ib && ib->pid)
			log_info("irqbalance (pid %d) is gone", (int)ib->pid);
		irqbalance_free(ib, false);
		*ibp = NULL;
		return 0;
	}
	if (ib && (ib->pid != pid || ib->starttime != starttime_of(pid))) {
		/* another irqbalance: it started with its own settings */
		irqbalance_free(ib, false);
		ib = *ibp = NULL;
	}
	if (!ib) {
		cpu_set_t none;
		CPU_ZERO(&none);
		if (!avoid && n == 0)
			return 0;
		if (!(ib = calloc(1, sizeof(*ib))))
			return -ENOMEM;
		*ibp = ib;
		ib->pid = pid;
		ib->starttime = starttime_of(pid);
		ib->state = st;
		snprintf(ib->sock, sizeof(ib->sock), "%s", sock);
		r = irqbalance_ask(sock, "setup", reply, sizeof(reply));
		if (r == 0)
			r = irqbalance_parse_setup(reply, &ib->own_cpus, ib->own_irqs, sizeof(ib->own_irqs));
		if (r < 0) {
			ib->error = r;
			log_errno(LOG_LEVEL_WARNING, r, "irqbalance (pid %d) runs and rebalances IRQs every 10 s, but "
				  "does not take settings from rtschedd over %s (it obeys root only); set "
				  "IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance instead (rtschedd --check says "
				  "which CPUs)", (int)pid, sock);
			return r;
		}
		log_info("irqbalance (pid %d) runs: rtschedd tells it what to leave alone over %s", (int)pid, sock);
	}
	ib->state = st;
	if (ib->error)
		return ib->error;
	/* its own bans plus rtschedd's */
	cpu_set_t cpus = ib->own_cpus;
	if (avoid)
		CPU_OR(&cpus, &cpus, avoid);
	size_t o = (size_t)snprintf(irqs, sizeof(irqs), "%s", ib->own_irqs);
	for (size_t i = 0; i < n && o + 12 < sizeof(irqs); i++)
		o += (size_t)snprintf(irqs + o, sizeof(irqs) - o, "%s%d", o ? " " : "", claimed[i]);
	bool first = !ib->told;
	if ((r = tell(ib, &cpus, irqs)) < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "telling irqbalance (pid %d) what to leave alone", (int)pid);
		return r;
	}
	if (first)
		journal(ib);
	return 1;
}

void irqbalance_describe(const struct irqbalance *ib, char *buf, size_t len)
{
	char cpus[256] = "none";

	if (!ib) {
		snprintf(buf, len, "not running");
		return;
	}
	if (ib->error) {
		snprintf(buf, len, "running (pid %d), not taking rtschedd's settings: %s", (int)ib->pid,
			 strerror(-ib->error));
		return;
	}
	if (CPU_COUNT(&ib->sent_cpus))
		cpulist_format(&ib->sent_cpus, cpus, sizeof(cpus));
	snprintf(buf, len, "running (pid %d), banning CPUs %s and IRQs %s", (int)ib->pid, cpus,
		 ib->sent_irqs[0] ? ib->sent_irqs : "none");
}

void irqbalance_free(struct irqbalance *ib, bool restore)
{
	char sock[sizeof(((struct irqbalance *)0)->sock)];
	pid_t pid;

	if (!ib)
		return;
	/* back to its own settings, if it is still the irqbalance told */
	if (restore && ib->told && !ib->error && irqinfo_find_irqbalance(IRQBALANCE_RUNDIR, &pid, sock, sizeof(sock)) == 0 &&
	    pid == ib->pid && starttime_of(pid) == ib->starttime) {
		snprintf(ib->sock, sizeof(ib->sock), "%s", sock);
		ib->told = false; /* send both */
		if (tell(ib, &ib->own_cpus, ib->own_irqs) < 0)
			log_warn("giving irqbalance (pid %d) its own settings back", (int)pid);
		else
			log_info("irqbalance (pid %d) has its own settings back", (int)pid);
	}
	if (restore || !ib->told)
		state_put_gone(ib->state, 'B', 0);
	free(ib);
}
