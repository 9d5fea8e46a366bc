/* cleanup.h: scope-bound cleanup, as systemd's and dbus-broker's code has
 * it. A variable declared _cleanup_(f) has f(&var) called when it goes out
 * of scope, so an early return neither leaks nor repeats the unwinding;
 * TAKE_PTR() hands the value on and leave nothing to clean. */
#ifndef RTSCHED_CLEANUP_H
#define RTSCHED_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

/* free(*p). */
static inline void freep(void *p)
{
	free(*(void **)p);
}

/* close(*fd) if it is open, errno kept (a caller may still log it). */
static inline void closep(const int *fd)
{
	if (*fd >= 0) {
		int e = errno;
		close(*fd);
		errno = e;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* A pointer's cleanup function from a free function taking the pointer
 * (NULL skipped): DEFINE_POINTER_CLEANUP(struct x *, x_free) makes x_freep. */
#define DEFINE_POINTER_CLEANUP(type, fn)                                                                          \
	static inline void fn##p(type *p)                                                                         \
	{                                                                                                          \
		if (*p)                                                                                            \
			fn(*p);                                                                                    \
	}

/* The value, and the variable emptied (NULL) so its cleanup does nothing. */
#define TAKE_PTR(p)                                                                                               \
	({                                                                                                         \
		__typeof__(p) take_ptr_ = (p);                                                                     \
		(p) = NULL;                                                                                        \
		take_ptr_;                                                                                         \
	})

#endif
