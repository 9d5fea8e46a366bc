/* preload-spy.c: a library for tests/preload.sh, put in LD_PRELOAD before
 * librtsched-preload.so so that the calls that library makes through its
 * PLT come here first. It counts the user look-ups through NSS (getpwnam,
 * getpwnam_r, getpwuid, getpwuid_r) and pthread_mutex_lock, passes each on
 * to libc, and at exit appends "getpw=N mutex=M" to the file named by
 * $RTSCHED_SPY_OUT. With $RTSCHED_SPY_DAEMON_UID set, a look-up of the
 * daemon's user ("rtschedd") answers that uid: this machine may have no
 * such user, and the test needs a listener that counts as the daemon's.
 * Built without the sanitizers, like the library it watches. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static unsigned long n_getpw, n_mutex;

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

EXPORT int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t len, struct passwd **res)
{
	static int (*f)(const char *, struct passwd *, char *, size_t, struct passwd **);
	const char *fake = getenv("RTSCHED_SPY_DAEMON_UID");

	__atomic_add_fetch(&n_getpw, 1, __ATOMIC_RELAXED);
	if (fake && strcmp(name, "rtschedd") == 0) {
		if (len < sizeof("rtschedd") + 2)
			return ERANGE;
		memset(pw, 0, sizeof(*pw));
		strcpy(buf, "rtschedd");
		pw->pw_name = buf;
		pw->pw_passwd = pw->pw_gecos = pw->pw_dir = pw->pw_shell = buf + strlen(buf);
		pw->pw_uid = (uid_t)atol(fake);
		pw->pw_gid = pw->pw_uid;
		*res = pw;
		return 0;
	}
	if (!f)
		f = next("getpwnam_r");
	return f(name, pw, buf, len, res);
}

EXPORT struct passwd *getpwnam(const char *name)
{
	static struct passwd *(*f)(const char *);

	__atomic_add_fetch(&n_getpw, 1, __ATOMIC_RELAXED);
	if (!f)
		f = next("getpwnam");
	return f(name);
}

EXPORT int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len, struct passwd **res)
{
	static int (*f)(uid_t, struct passwd *, char *, size_t, struct passwd **);

	__atomic_add_fetch(&n_getpw, 1, __ATOMIC_RELAXED);
	if (!f)
		f = next("getpwuid_r");
	return f(uid, pw, buf, len, res);
}

EXPORT struct passwd *getpwuid(uid_t uid)
{
	static struct passwd *(*f)(uid_t);

	__atomic_add_fetch(&n_getpw, 1, __ATOMIC_RELAXED);
	if (!f)
		f = next("getpwuid");
	return f(uid);
}

static int (*real_mutex_lock)(pthread_mutex_t *);

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	int (*f)(pthread_mutex_t *) = __atomic_load_n(&real_mutex_lock, __ATOMIC_RELAXED);

	__atomic_add_fetch(&n_mutex, 1, __ATOMIC_RELAXED);
	if (!f) {
		f = next("pthread_mutex_lock");
		__atomic_store_n(&real_mutex_lock, f, __ATOMIC_RELAXED);
	}
	return f(m);
}

__attribute__((constructor)) static void spy_load(void)
{
	real_mutex_lock = next("pthread_mutex_lock");
}

__attribute__((destructor)) static void spy_report(void)
{
	const char *out = getenv("RTSCHED_SPY_OUT");
	char line[96];
	int fd, n;

	if (!out || !*out)
		return;
	n = snprintf(line, sizeof(line), "getpw=%lu mutex=%lu\n", __atomic_load_n(&n_getpw, __ATOMIC_RELAXED),
		     __atomic_load_n(&n_mutex, __ATOMIC_RELAXED));
	fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		n = 0;
	close(fd);
}
