/* fiber_ucontext.c — portable fiber contexts on getcontext/makecontext/swapcontext, used on
 * CPUs without a hand-written switch and under ASan/TSan, which it informs of every stack
 * switch. It is not fast (swapcontext saves the signal mask with a system call).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>

#include "sim/fiber_arch.h"

#if defined(ILAB_ASAN) || defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FIBER_ASAN 1
#endif
#if defined(ILAB_TSAN) || defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define FIBER_TSAN 1
#endif

const char fiber_arch_name[] = "ucontext";

struct uctx {
	ucontext_t uc;
	fiber_arch_entry entry;
	void *arg;
	const void *stack_bottom; /* for ASan: the stack this context runs on */
	size_t stack_size;
	void *tsan_fiber;
	int is_main;
};

/* makecontext passes int arguments only: split the pointer in two halves. */
static void uctx_start(unsigned lo, unsigned hi)
{
	struct uctx *u = (struct uctx *)(((uintptr_t)hi << 32) | (uintptr_t)lo);

#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
	u->entry(u->arg);
	abort(); /* the entry never returns */
}

int fiber_arch_init_main(struct fiber_arch_ctx *ctx)
{
	struct uctx *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->is_main = 1;
#ifdef FIBER_ASAN
	{
		pthread_attr_t attr;
		void *addr;
		size_t size;

		if (pthread_getattr_np(pthread_self(), &attr) == 0) {
			if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
				u->stack_bottom = addr;
				u->stack_size = size;
			}
			pthread_attr_destroy(&attr);
		}
	}
#endif
#ifdef FIBER_TSAN
	u->tsan_fiber = __tsan_get_current_fiber();
#endif
	ctx->sp = NULL;
	ctx->priv = u;
	return 0;
}

int fiber_arch_init(struct fiber_arch_ctx *ctx, void *stack, size_t size, fiber_arch_entry entry,
		    void *arg)
{
	/* volatile: getcontext() returns twice as far as the compiler knows, and gcc -O2 warns
	 * (-Wclobbered, an error with ILAB_WERROR) that a register copy of u could be stale. */
	struct uctx *volatile u;
	uintptr_t p;

	if (!stack || size < 4096 || !entry)
		return -EINVAL;
	u = ctx->priv;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
	}
	if (getcontext(&u->uc) != 0) {
		if (!ctx->priv)
			free(u);
		return -errno;
	}
	u->uc.uc_stack.ss_sp = stack;
	u->uc.uc_stack.ss_size = size;
	u->uc.uc_link = NULL;
	u->entry = entry;
	u->arg = arg;
	u->stack_bottom = stack;
	u->stack_size = size;
	p = (uintptr_t)u;
	makecontext(&u->uc, (void (*)(void))uctx_start, 2, (unsigned)(p & 0xffffffffu),
		    (unsigned)(p >> 32));
#ifdef FIBER_TSAN
	if (!u->tsan_fiber)
		u->tsan_fiber = __tsan_create_fiber(0);
#endif
	ctx->sp = NULL;
	ctx->priv = u;
	return 0;
}

static void uctx_switch(struct fiber_arch_ctx *from, struct fiber_arch_ctx *to, int dying)
{
	struct uctx *f = from->priv, *t = to->priv;
#ifdef FIBER_ASAN
	void *fake = NULL;

	__sanitizer_start_switch_fiber(dying ? NULL : &fake, t->stack_bottom, t->stack_size);
#endif
#ifdef FIBER_TSAN
	__tsan_switch_to_fiber(t->tsan_fiber, 0);
#endif
	swapcontext(&f->uc, &t->uc);
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	(void)dying;
}

void fiber_arch_switch(struct fiber_arch_ctx *from, struct fiber_arch_ctx *to)
{
	uctx_switch(from, to, 0);
}

void fiber_arch_exit_to(struct fiber_arch_ctx *from, struct fiber_arch_ctx *to)
{
	uctx_switch(from, to, 1);
}

void fiber_arch_destroy(struct fiber_arch_ctx *ctx)
{
	struct uctx *u = ctx->priv;

	if (!u)
		return;
#ifdef FIBER_TSAN
	if (!u->is_main && u->tsan_fiber)
		__tsan_destroy_fiber(u->tsan_fiber);
#endif
	free(u);
	ctx->priv = NULL;
}
