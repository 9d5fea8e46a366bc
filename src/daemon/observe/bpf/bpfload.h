/* bpfload.h: how a BPF object of this folder is loaded, defined in
 * bpfobs.c and shared by the observer and the catcher (catcher.c), which
 * loads its own object the same way: libbpf's messages captured, the checks
 * before loading and the reasons of a failure, each as bpfobs_new() gives
 * them (bpfobs.h). A public header of the folder, not bpfobs's private
 * one: two modules use it. */
#ifndef RTSCHED_BPFLOAD_H
#define RTSCHED_BPFLOAD_H

#include <errno.h>
#include <stddef.h>

#include <bpf/libbpf.h>

/* Capture libbpf's messages from now on; returns the printer to restore. */
libbpf_print_fn_t bpfobs_capture_begin(void);
/* BTF, lockdown and the kernel's version; 0 or -errno with why. */
int bpfobs_precheck(char *why, size_t len);
/* A libbpf error at stage ("open", "load", "attach") as bpfobs_new()'s
 * -errno, with why (what libbpf or the verifier said). */
int bpfobs_load_error(int err, const char *stage, char *why, size_t len);

/* Records read from a ring buffer per turn of the event loop. A user
 * drives both rings' producers (a refused call retried in a loop, new
 * threads that each make one), and ring_buffer__consume() (libbpf 1.1 has
 * no _n variant) reads until the ring is empty, which a producer on
 * another CPU can put off for as long as it likes: the loop would not come
 * back to check its budget (sys/rtloop.h). A record callback that returns
 * RB_BATCH_END ends the read; libbpf has consumed the records up to it, and
 * the rest wait in the ring, whose descriptor stays readable, for the
 * loop's next turn. */
#define RB_BATCH 64u
#define RB_BATCH_END (-EAGAIN)

#endif
