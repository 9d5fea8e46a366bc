/* noise-helper.c: known noise on one CPU, for tests/why.sh and make bench
 * (section 9): what `rtschedctl why` must name as the culprit.
 *
 *   noise-helper syscall --cpu N [--seconds S] [--mb M]
 *       A SCHED_OTHER thread named noise-syscall, pinned to CPU N, spending
 *       long stretches in one system call: pread() of M MiB (16) of its own
 *       /proc/self/pagemap over a reserved, unmapped terabyte, which the
 *       kernel walks without a preemption point (about 3 ms here), with a
 *       1 ms sleep between reads.
 *   noise-helper udp --cpu N [--seconds S] [--count C]
 *       Softirq load from loopback traffic: a thread named noise-udp,
 *       pinned to CPU N, sends at most C (10,000,000) 64-byte UDP datagrams
 *       to a socket of its own bound to 127.0.0.1, whose socket filter (a
 *       classic BPF program of 4,096 instructions that rejects every
 *       datagram) makes each datagram's receive softirq cost a few
 *       microseconds, as a firewall or a busy receive path would: datagrams
 *       then come faster than one CPU receives them, and NET_RX runs in long
 *       batches. The softirq runs where the packets are steered: on the
 *       sender's CPU, or with RPS on lo (tests/why.sh sets it) on another.
 *       Plain datagrams were measured not to be enough here: a FIFO 10
 *       thread at 1 kHz saw 20 of 5,000 wake-ups 200 us late with them,
 *       3,000 of 5,000 100 us late with the filter.
 *
 * It prints "tid TID pid PID" once the thread runs and "done N" (reads or
 * datagrams) at the end. Whatever happens it stops after S seconds (10):
 * a test that dies leaves no noise behind. Traffic never leaves 127.0.0.1. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int cpu = -1;
static double seconds = 10;
static long mb = 16, count = 10000000;
static const char *mode;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: noise-helper syscall|udp --cpu N [--seconds S] [--mb M] [--count C]\n");
	exit(2);
}

/* Long stretches in one system call: the pagemap of unmapped memory. */
static long run_syscall(double end)
{
	size_t len = (size_t)mb << 20;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	void *hole = mmap(NULL, (size_t)1 << 40, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	struct timespec ms = { 0, 1000000 };
	long n = 0;

	if (buf == MAP_FAILED || hole == MAP_FAILED || fd < 0) {
		fprintf(stderr, "noise-helper: syscall setup: %s\n", strerror(errno));
		exit(1);
	}
	/* 8 bytes per page: this much buffer walks len / 8 pages of the hole */
	while (now_s() < end) {
		if (pread(fd, buf, len, (off_t)((unsigned long)hole / 4096 * 8)) < 0) {
			fprintf(stderr, "noise-helper: pagemap: %s\n", strerror(errno));
			exit(1);
		}
		n++;
		nanosleep(&ms, NULL);
	}
	return n;
}

/* A filter of BPF_MAXINSNS instructions, a chain of dependent multiplies
 * the JIT cannot fold, that rejects every datagram. */
#define FILTER_LEN 4096
static struct sock_filter filter[FILTER_LEN];

/* Loopback datagrams to a socket whose filter makes receiving them costly. */
static long run_udp(double end)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sock_fprog prog = { .len = FILTER_LEN, .filter = filter };
	socklen_t al = sizeof(a);
	int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char msg[64] = { 0 };
	long n = 0;

	filter[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0);
	for (int i = 1; i < FILTER_LEN - 1; i++)
		filter[i] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3);
	filter[FILTER_LEN - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(r, (struct sockaddr *)&a, &al) < 0 ||
	    setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0) {
		fprintf(stderr, "noise-helper: udp setup: %s\n", strerror(errno));
		exit(1);
	}
	while (n < count && (n % 256 || now_s() < end)) {
		if (sendto(s, msg, sizeof(msg), 0, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != ENOBUFS &&
		    errno != EAGAIN) {
			fprintf(stderr, "noise-helper: sendto: %s\n", strerror(errno));
			exit(1);
		}
		n++;
	}
	return n;
}

static void *worker(void *arg)
{
	double end = now_s() + seconds;
	cpu_set_t one;
	long n;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one)) {
		fprintf(stderr, "noise-helper: cannot pin to CPU %d\n", cpu);
		exit(1);
	}
	prctl(PR_SET_NAME, strcmp(mode, "udp") == 0 ? "noise-udp" : "noise-syscall");
	printf("tid %ld pid %d\n", (long)syscall(SYS_gettid), (int)getpid());
	fflush(stdout);
	n = strcmp(mode, "udp") == 0 ? run_udp(end) : run_syscall(end);
	printf("done %ld\n", n);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2 || (strcmp(argv[1], "syscall") && strcmp(argv[1], "udp")))
		usage();
	mode = argv[1];
	for (int i = 2; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--cpu"))
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--mb"))
			mb = atol(argv[++i]);
		else if (!strcmp(argv[i], "--count"))
			count = atol(argv[++i]);
		else
			usage();
	}
	if (cpu < 0 || seconds <= 0 || seconds > 3600 || mb < 1 || mb > 1024 || count < 1)
		usage();
	/* the bound of last resort: a stuck system call still ends with the process */
	alarm((unsigned)seconds + 5);
	if (pthread_create(&t, NULL, worker, NULL)) {
		fprintf(stderr, "noise-helper: pthread_create failed\n");
		return 1;
	}
	pthread_join(t, NULL);
	return 0;
}
