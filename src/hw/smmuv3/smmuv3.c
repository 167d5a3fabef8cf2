/* smmuv3.c — the model's top level: default configuration, validation, create/reset/destroy and
 * statistics. Not any architected behaviour (see regs.c, cmdq.c, translate.c and friends). */
#include <errno.h>
#include <stdlib.h>

#include "smmuv3_internal.h"

void smmu_config_default(struct smmu_config *c)
{
    memset(c, 0, sizeof(*c));
    /* IDR0.Hyp is RES0 without S2P (§6.3.1), and this model has no stage 2. */
    c->hyp = false;
    c->ats = true;
    c->asid16 = true;
    c->vmid16 = true;
    c->msi = true;
    c->sev = true;
    c->cd2l = true;
    c->strtab_2lvl = true;
    c->term_model = false;
    c->coherent = true;
    c->ttendian = 0;
    c->sidsize = 16;
    c->ssidsize = 20;
    c->cmdqs = 19;
    c->eventqs = 19;
    c->ril = true;
    c->had = true;
    c->oas = 48;
    c->gran4k = c->gran16k = c->gran64k = true;
    c->arch_minor = 2;
    c->iidr = 0x43B; /* JEP106 code of Arm, product/revision 0 */
    c->gbpa_abort_at_reset = false;
    /* Cache sizes in the range of published TCU/TBU designs (MMU-600/700 TRMs list 64–2048
     * entry structures); free parameters of this model, see docs/smmuv3-model.md. */
    c->ste_cache = (struct smmu_cache_geom){128, 4, SMMU_POLICY_LRU};
    c->cd_cache = (struct smmu_cache_geom){128, 4, SMMU_POLICY_LRU};
    c->tlb = (struct smmu_cache_geom){2048, 4, SMMU_POLICY_LRU};
    c->walk_cache[0] = (struct smmu_cache_geom){16, 0, SMMU_POLICY_LRU};
    c->walk_cache[1] = (struct smmu_cache_geom){64, 4, SMMU_POLICY_LRU};
    c->walk_cache[2] = (struct smmu_cache_geom){256, 4, SMMU_POLICY_LRU};
    c->seed = 1;
    c->thread_safe = true;
    c->attr_perms_ovr = true;
}

/* ID-register fields that must agree with each other and with the version (IHI 0070 §6.3):
 * a configuration no SMMU may report is refused here, not modelled. */
static const char *id_consistency(const struct smmu_config *c)
{
    if (c->hyp)
        return "hyp needs stage 2: IDR0.Hyp is RES0 when IDR0.S2P == 0 (IHI 0070 §6.3.1), "
               "and this model implements stage 1 only";
    if (c->sidsize >= 7 && !c->strtab_2lvl)
        return "sidsize >= 7 needs strtab_2lvl: IDR0.ST_LEVEL != 0b00 when IDR1.SIDSIZE >= 7 "
               "(IHI 0070 §6.3.2)";
    if (c->ril && c->arch_minor < 2)
        return "ril needs arch_minor >= 2: range invalidation is an SMMUv3.2 feature";
    if (!c->ril && c->arch_minor >= 2)
        return "arch_minor >= 2 needs ril: IDR3.RIL is 1 from SMMUv3.2 on (IHI 0070 §6.3.4)";
    if (c->oas == 52 && !c->gran64k)
        return "oas 52 needs gran64k: a 52-bit OAS needs the 64KB granule, DS or D128 "
               "(IHI 0070 §6.3.6), and this model has neither DS nor D128";
    if (!c->had && c->arch_minor >= 1)
        return "arch_minor >= 1 needs had: IDR3.HAD is mandatory with stage 1 from SMMUv3.1 "
               "(IHI 0070 §6.3.4)";
    return NULL;
}

static const char *validate(const struct smmu_config *c, const struct smmu_host_ops *ops)
{
    const char *why;

    if (!ops || !ops->mem_read || !ops->mem_write)
        return "host ops: mem_read and mem_write are required";
    if (c->sidsize > 32)
        return "sidsize > 32";
    if (c->ssidsize > 20)
        return "ssidsize > 20";
    if (c->cmdqs > 19)
        return "cmdqs > 19";
    if (c->eventqs > 19)
        return "eventqs > 19";
    if (c->oas != 32 && c->oas != 36 && c->oas != 40 && c->oas != 42 && c->oas != 44 &&
        c->oas != 48 && c->oas != 52)
        return "oas must be 32, 36, 40, 42, 44, 48 or 52";
    if (c->oas == 52 && c->arch_minor == 0)
        return "oas 52 needs SMMUv3.1 or later";
    if (c->arch_minor > 3)
        return "arch_minor must be 0..3";
    if (!c->gran4k && !c->gran16k && !c->gran64k)
        return "no translation granule";
    if (c->ttendian == 1)
        return "ttendian 1 is Reserved";
    if (c->ttendian > 3)
        return "ttendian > 3";
    if (c->ecmdq_count) {
        if (c->ecmdq_count > ECMDQ_MAX || (c->ecmdq_count & (c->ecmdq_count - 1)))
            return "ecmdq_count must be 0 or a power of two <= 1024";
        if (c->arch_minor < 3)
            return "ecmdq_count needs arch_minor 3 (ECMDQ is an SMMUv3.3 feature)";
        if (!c->msi || !c->coherent)
            return "ecmdq_count needs msi and coherent (IDR1.ECMDQ implies MSI and COHACC)";
    }
    if (c->cmdqv_vcmdqs || c->cmdqv_vintfs) {
        if (c->cmdqv_vcmdqs > 128 || (c->cmdqv_vcmdqs & (c->cmdqv_vcmdqs - 1)) || !c->cmdqv_vcmdqs)
            return "cmdqv_vcmdqs must be 0 or a power of two <= 128 (PARAM.NUM_VCMDQ_LOG2)";
        if (!c->cmdqv_vintfs || c->cmdqv_vintfs > 64 || (c->cmdqv_vintfs & (c->cmdqv_vintfs - 1)) ||
            c->cmdqv_vintfs > c->cmdqv_vcmdqs)
            return "cmdqv_vintfs must be a power of two <= 64 and <= cmdqv_vcmdqs";
        if (c->ecmdq_count)
            return "cmdqv_vcmdqs and ecmdq_count: an SMMU here has ECMDQs or a CMDQV, not both";
    }
    if ((why = id_consistency(c)))
        return why;
    if (c->ecmdq_log2size_max > c->cmdqs)
        return "ecmdq_log2size_max > cmdqs";
    const struct smmu_cache_geom *g[] = {&c->ste_cache, &c->cd_cache, &c->tlb, &c->walk_cache[0],
                                         &c->walk_cache[1], &c->walk_cache[2]};
    for (unsigned i = 0; i < 6; i++) {
        if (g[i]->policy > SMMU_POLICY_RANDOM)
            return "cache policy unknown";
        if (g[i]->entries > (1u << 24))
            return "cache larger than 16M entries";
    }
    return NULL;
}

static void free_all(struct smmu *s)
{
    smmu_cache_fini(&s->ste_c);
    smmu_cache_fini(&s->cd_c);
    free(s->ste_e);
    free(s->cd_e);
    smmu_tcache_fini(&s->tlb);
    for (int l = 0; l < 3; l++)
        smmu_tcache_fini(&s->walk[l]);
    smmu_cmdqv_fini(s);
    free(s->cmdq);
    free(s->rr_active);
    free((void *)s->pending);
    free(s->pending_taken);
    free(s);
}

int smmu_create(struct smmu **out, const struct smmu_config *cfg, const struct smmu_host_ops *ops,
                void *ctx, const char **err_msg)
{
    *out = NULL;
    const char *why = validate(cfg, ops);
    if (why) {
        if (err_msg)
            *err_msg = why;
        return -EINVAL;
    }
    struct smmu *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->cfg = *cfg;
    s->ops = *ops;
    s->ctx = ctx;
    atomic_init(&s->lock, 0);
    int rc = smmu_cache_init(&s->ste_c, &cfg->ste_cache, cfg->seed);
    rc = rc ? rc : smmu_cache_init(&s->cd_c, &cfg->cd_cache, cfg->seed + 1);
    rc = rc ? rc : smmu_tcache_init(&s->tlb, &cfg->tlb, cfg->seed + 2);
    for (int l = 0; l < 3 && !rc; l++)
        rc = smmu_tcache_init(&s->walk[l], &cfg->walk_cache[l], cfg->seed + 3 + (uint64_t)l);
    if (!rc && s->ste_c.lines && !(s->ste_e = calloc(s->ste_c.lines, sizeof(*s->ste_e))))
        rc = -ENOMEM;
    if (!rc && s->cd_c.lines && !(s->cd_e = calloc(s->cd_c.lines, sizeof(*s->cd_e))))
        rc = -ENOMEM;
    s->ncmdq = 1 + cfg->ecmdq_count + cfg->cmdqv_vcmdqs;
    s->npending = (s->ncmdq + 63) / 64;
    if (!rc && (!(s->cmdq = calloc(s->ncmdq, sizeof(*s->cmdq))) ||
                !(s->rr_active = calloc(s->ncmdq, sizeof(*s->rr_active))) ||
                !(s->pending = calloc(s->npending, sizeof(*s->pending))) ||
                !(s->pending_taken = calloc(s->npending, sizeof(*s->pending_taken)))))
        rc = -ENOMEM;
    if (!rc)
        rc = smmu_cmdqv_init(s);
    if (rc) {
        free_all(s);
        if (err_msg)
            *err_msg = "out of memory";
        return rc;
    }
    smmu_regs_compute_idr(s);
    smmu_reset(s);
    *out = s;
    return 0;
}

void smmu_destroy(struct smmu *s)
{
    if (s)
        free_all(s);
}

void smmu_reset(struct smmu *s)
{
    smmu_regs_reset(s);
    smmu_cfg_inv_all(s);
    smmu_tcache_flush(&s->tlb);
    for (int l = 0; l < 3; l++)
        smmu_tcache_flush(&s->walk[l]);
    atomic_store(&s->lock, 0);
}

const struct smmu_config *smmu_get_config(const struct smmu *s) { return &s->cfg; }

void smmu_get_stats(struct smmu *s, struct smmu_stats *out)
{
    smmu_lock(s);
    *out = s->st;
    smmu_unlock(s);
}

int smmu_get_cache_stats(struct smmu *s, enum smmu_cache_id id, struct smmu_cache_stats *out)
{
    const struct smmu_cache *c;
    switch (id) {
    case SMMU_CACHE_STE: c = &s->ste_c; break;
    case SMMU_CACHE_CD: c = &s->cd_c; break;
    case SMMU_CACHE_TLB: c = &s->tlb.c; break;
    case SMMU_CACHE_WALK_L0: c = &s->walk[0].c; break;
    case SMMU_CACHE_WALK_L1: c = &s->walk[1].c; break;
    case SMMU_CACHE_WALK_L2: c = &s->walk[2].c; break;
    default: return -EINVAL;
    }
    smmu_lock(s);
    *out = c->st;
    smmu_unlock(s);
    return 0;
}

unsigned smmu_cmdq_count(const struct smmu *s) { return s->ncmdq; }

int smmu_get_cmdq_stats(struct smmu *s, unsigned queue, struct smmu_queue_stats *out)
{
    if (queue >= s->ncmdq)
        return -EINVAL;
    smmu_lock(s);
    *out = s->cmdq[queue].st;
    smmu_unlock(s);
    return 0;
}

void smmu_clear_stats(struct smmu *s)
{
    smmu_lock(s);
    memset(&s->st, 0, sizeof(s->st));
    for (unsigned i = 0; i < s->ncmdq; i++)
        memset(&s->cmdq[i].st, 0, sizeof(s->cmdq[i].st));
    struct smmu_cache *cs[] = {&s->ste_c, &s->cd_c, &s->tlb.c, &s->walk[0].c, &s->walk[1].c,
                               &s->walk[2].c};
    for (unsigned i = 0; i < 6; i++) {
        struct smmu_cache_stats keep = cs[i]->st;
        memset(&cs[i]->st, 0, sizeof(cs[i]->st));
        cs[i]->st.capacity = keep.capacity;
        cs[i]->st.sets = keep.sets;
        cs[i]->st.ways = keep.ways;
    }
    smmu_unlock(s);
}
