/* fiber_x86_64.c — builds the initial frame of an x86-64 fiber so that the first
 * fiber_arch_switch() into it "returns" into fiber_arch_trampoline. The switch itself is in
 * fiber_switch.S; this file is not used under sanitizers (the ucontext variant is).
 */
#include <errno.h>
#include <stdint.h>

#include "sim/fiber_arch.h"

const char fiber_arch_name[] = "x86_64";

void fiber_arch_trampoline(void);

int fiber_arch_init_main(struct fiber_arch_ctx *ctx)
{
	ctx->sp = NULL; /* filled by the first switch away from the host stack */
	ctx->priv = NULL;
	return 0;
}

/* Frame popped by fiber_arch_switch, from the initial sp upwards:
 *   [0] MXCSR (low 32 bits) and x87 control word (bits 32..47)
 *   [1] r15 [2] r14 [3] r13 [4] r12 = arg [5] rbx = entry [6] rbp
 *   [7] return address = fiber_arch_trampoline
 * After the ret, rsp = top - 16, 16-byte aligned, so the trampoline's call is ABI-aligned. */
int fiber_arch_init(struct fiber_arch_ctx *ctx, void *stack, size_t size, fiber_arch_entry entry,
		    void *arg)
{
	uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
	uint64_t *frame;

	if (!stack || size < 4096 || !entry)
		return -EINVAL;
	frame = (uint64_t *)(top - 16 - 8 * 8);
	frame[0] = 0x1F80ull | (0x037Full << 32); /* power-on MXCSR and x87 control word */
	frame[1] = 0;
	frame[2] = 0;
	frame[3] = 0;
	frame[4] = (uint64_t)(uintptr_t)arg;
	frame[5] = (uint64_t)(uintptr_t)entry;
	frame[6] = 0;
	frame[7] = (uint64_t)(uintptr_t)fiber_arch_trampoline;
	ctx->sp = frame;
	ctx->priv = NULL;
	return 0;
}

void fiber_arch_destroy(struct fiber_arch_ctx *ctx)
{
	ctx->sp = NULL;
}
