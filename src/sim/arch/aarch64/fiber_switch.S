/* fiber_switch.S — AArch64 (AAPCS64) fiber context switch: saves x19-x30 and d8-d15 (the
 * callee-saved registers) and FPCR on the old stack and restores them from the new one. It is
 * not a general setjmp: caller-saved state is, by the ABI, already dead across the call.
 */
	.text

/* Frame (176 bytes, 16-byte aligned), from sp upwards:
 *   0: x19 x20   16: x21 x22   32: x23 x24   48: x25 x26   64: x27 x28
 *  80: x29 x30   96: d8 d9    112: d10 d11  128: d12 d13  144: d14 d15  160: fpcr, pad */

/* void fiber_arch_switch(struct fiber_arch_ctx *from (x0), struct fiber_arch_ctx *to (x1)) */
	.globl	fiber_arch_switch
	.type	fiber_arch_switch, %function
	.globl	fiber_arch_exit_to
	.type	fiber_arch_exit_to, %function
	.p2align 4
fiber_arch_switch:
fiber_arch_exit_to:
	sub	sp, sp, #176
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x9, fpcr
	str	x9, [sp, #160]
	mov	x9, sp
	str	x9, [x0]		/* from->sp */
	ldr	x9, [x1]		/* to->sp */
	mov	sp, x9
	ldr	x9, [sp, #160]
	msr	fpcr, x9
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #176
	ret				/* to x30 */
	.size	fiber_arch_switch, .-fiber_arch_switch
	.size	fiber_arch_exit_to, .-fiber_arch_exit_to

/* First switch-in of a new fiber: x19 holds the entry function, x20 its argument. */
	.globl	fiber_arch_trampoline
	.type	fiber_arch_trampoline, %function
	.p2align 4
fiber_arch_trampoline:
	mov	x0, x20
	mov	x29, #0			/* end of the frame chain, for debuggers */
	blr	x19
	brk	#0			/* the entry never returns */
	.size	fiber_arch_trampoline, .-fiber_arch_trampoline

	.section .note.GNU-stack,"",%progbits
