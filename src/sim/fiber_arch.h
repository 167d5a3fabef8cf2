/* fiber_arch.h — the tiny interface between the simulator's scheduler and the per-architecture
 * context switch (src/sim/arch/<arch>/). It is not a threading library: no scheduling, no
 * stacks allocation policy, just "make a context that will run entry(arg)" and "switch".
 *
 * Exactly one arch directory is compiled in (CMake picks x86_64, aarch64, or ucontext, the last
 * one under ASan/TSan because sanitizers must be told about stack switches).
 */
#ifndef ILAB_SIM_FIBER_ARCH_H
#define ILAB_SIM_FIBER_ARCH_H

#include <stddef.h>

/* A saved execution context. sp must stay the first member: the assembly switches save and
 * load it at offset 0. priv belongs to the arch implementation (ucontext keeps its
 * ucontext_t and sanitizer state there). */
struct fiber_arch_ctx {
	void *sp;
	void *priv;
};

/* Entry point of a new context. It must never return: a finished fiber switches away for good
 * with fiber_arch_exit_to(). */
typedef void (*fiber_arch_entry)(void *arg);

/* Describe the calling (host) thread's own context so that fibers can switch back to it.
 * Returns 0 or a negative errno. */
int fiber_arch_init_main(struct fiber_arch_ctx *ctx);

/* Prepare ctx to run entry(arg) on the stack [stack, stack + size) at its first switch-in.
 * Returns 0 or a negative errno. */
int fiber_arch_init(struct fiber_arch_ctx *ctx, void *stack, size_t size, fiber_arch_entry entry,
		    void *arg);

/* Save the current context into from and resume to. Returns when someone switches back. */
void fiber_arch_switch(struct fiber_arch_ctx *from, struct fiber_arch_ctx *to);

/* Like fiber_arch_switch, for a context that will never be resumed (its fiber finished). */
void fiber_arch_exit_to(struct fiber_arch_ctx *from, struct fiber_arch_ctx *to);

/* Release what fiber_arch_init / fiber_arch_init_main allocated (not the stack). */
void fiber_arch_destroy(struct fiber_arch_ctx *ctx);

/* Name of the implementation ("x86_64", "aarch64", "ucontext"), for statistics. */
extern const char fiber_arch_name[];

#endif /* ILAB_SIM_FIBER_ARCH_H */
