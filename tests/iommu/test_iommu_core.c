/* test_iommu_core.c — the IOMMU core: probe gives each device its own group and a default
 * domain of the requested type, attach/detach moves a group between domains, both domain
 * lookups agree and the refcounted one leaves the group's count balanced, bad input is refused.
 * Runs on the fake driver (tests/support/fake_iommu.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommu/dma_test_util.h"

static int setup(void **state)
{
	static struct tu t;

	if (tu_setup(&t, false))
		return -1;
	*state = &t;
	return 0;
}

static int teardown(void **state)
{
	tu_teardown(*state);
	return 0;
}

static void probe_gives_one_group_per_device(void **state)
{
	struct tu *t = *state;
	struct ilab_dev a, b;

	tu_dev_init(t, &a, "a", 1, 0, 48);
	tu_dev_init(t, &b, "b", 2, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&a, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_iommu_probe_device(&b, ILAB_DOMAIN_DMA), 0);
	assert_non_null(a.group);
	assert_non_null(b.group);
	assert_ptr_not_equal(a.group, b.group);
	assert_int_not_equal(ilab_iommu_group_id(a.group), ilab_iommu_group_id(b.group));
	assert_ptr_not_equal(ilab_iommu_get_dma_domain(&a), ilab_iommu_get_dma_domain(&b));
	/* one reference for the core, one for the device */
	assert_int_equal(ilab_iommu_group_refcount(a.group), 2);
	ilab_iommu_release_device(&a);
	ilab_iommu_release_device(&b);
	assert_null(a.group);
	assert_null(a.dma_priv);
}

static void default_domain_types(void **state)
{
	struct tu *t = *state;
	static const enum ilab_domain_type types[] = { ILAB_DOMAIN_DMA, ILAB_DOMAIN_DMA_FQ,
						       ILAB_DOMAIN_IDENTITY };

	for (unsigned i = 0; i < 3; i++) {
		struct ilab_dev d;
		struct ilab_iommu_domain *dom;

		tu_dev_init(t, &d, "d", 3, 0, 48);
		assert_int_equal(ilab_iommu_probe_device(&d, types[i]), 0);
		dom = ilab_iommu_get_dma_domain(&d);
		assert_non_null(dom);
		assert_int_equal(dom->type, types[i]);
		assert_ptr_equal(dom->iommu, t->iommu);
		/* DMA domains get an IOVA cookie, identity does not */
		if (types[i] == ILAB_DOMAIN_IDENTITY)
			assert_null(dom->iova_cookie);
		else
			assert_non_null(dom->iova_cookie);
		ilab_iommu_release_device(&d);
	}
}

static void fq_falls_back_to_strict_without_flush_all(void **state)
{
	struct tu *t = *state;
	struct fake_iommu *f2;
	struct ilab_dev d;
	struct ilab_iommu_domain *dom;

	assert_int_equal(fake_iommu_create(t->mem, 0, true, &f2), 0);
	tu_dev_init(t, &d, "d", 4, 0, 48);
	d.iommu = fake_iommu_get(f2);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA_FQ), 0);
	dom = ilab_iommu_get_dma_domain(&d);
	assert_int_equal(dom->type, ILAB_DOMAIN_DMA); /* Linux: lazy needs flush_iotlb_all */
	ilab_iommu_release_device(&d);
	fake_iommu_destroy(f2);
}

static void attach_and_detach_unmanaged(void **state)
{
	struct tu *t = *state;
	struct ilab_dev d;
	struct ilab_iommu_domain *def, *um, *um2;
	ilab_pa_t pa = tu_buffer(t, 0, 0, 1);
	uint8_t buf[16], want[16];

	tu_dev_init(t, &d, "d", 5, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
	def = ilab_iommu_get_dma_domain(&d);
	um = ilab_iommu_domain_alloc(t->iommu, ILAB_DOMAIN_UNMANAGED, -1);
	um2 = ilab_iommu_domain_alloc(t->iommu, ILAB_DOMAIN_UNMANAGED, -1);
	assert_non_null(um);
	assert_non_null(um2);
	assert_null(um->iova_cookie);

	assert_int_equal(ilab_iommu_attach_device(um, &d), 0);
	assert_ptr_equal(d.group->domain, um);
	assert_ptr_equal(ilab_iommu_get_domain_for_dev(&d), um);
	/* the DMA domain stays the default */
	assert_ptr_equal(ilab_iommu_get_dma_domain(&d), def);
	/* a group on a non-default domain cannot be attached elsewhere */
	assert_int_equal(ilab_iommu_attach_group(um2, d.group), -EBUSY);

	/* the device now translates through the unmanaged domain */
	assert_int_equal(ilab_iommu_domain_map(um, 0x100000, pa, 4096,
					       ILAB_IOMMU_READ | ILAB_IOMMU_WRITE), 0);
	assert_int_equal(ilab_iommu_iova_to_phys(um, 0x100000 + 8), pa + 8);
	assert_int_equal(fake_iommu_dma(t->fake, d.sid, 0x100000, buf, sizeof(buf), false), 0);
	memcpy(want, ilab_mem_va(t->mem, pa, 16), 16);
	assert_memory_equal(buf, want, 16);

	ilab_iommu_detach_device(um, &d);
	assert_ptr_equal(d.group->domain, def);
	/* back on the default domain, where nothing is mapped at that IOVA */
	assert_int_not_equal(fake_iommu_dma(t->fake, d.sid, 0x100000, buf, sizeof(buf), false), 0);
	assert_int_equal(ilab_iommu_domain_unmap(um, 0x100000, 4096), 4096);
	assert_int_equal(ilab_iommu_iova_to_phys(um, 0x100000), 0);
	ilab_iommu_domain_free(um);
	ilab_iommu_domain_free(um2);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(t->mem, pa, 0);
}

static void shared_group(void **state)
{
	struct tu *t = *state;
	struct ilab_dev a, b;
	struct ilab_iommu_domain *um;

	tu_dev_init(t, &a, "a", 6, 0, 48);
	tu_dev_init(t, &b, "alias", 7, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&a, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_iommu_group_add_device(a.group, &b), 0);
	assert_ptr_equal(a.group, b.group);
	assert_ptr_equal(ilab_iommu_get_dma_domain(&a), ilab_iommu_get_dma_domain(&b));
	assert_int_equal(ilab_iommu_group_refcount(a.group), 3);
	/* single-device attach is refused for a shared group */
	um = ilab_iommu_domain_alloc(t->iommu, ILAB_DOMAIN_UNMANAGED, -1);
	assert_int_equal(ilab_iommu_attach_device(um, &a), -EINVAL);
	/* a group attach moves both */
	assert_int_equal(ilab_iommu_attach_group(um, a.group), 0);
	assert_ptr_equal(ilab_iommu_get_domain_for_dev(&b), um);
	ilab_iommu_detach_group(um, a.group);
	ilab_iommu_domain_free(um);
	ilab_iommu_release_device(&b);
	assert_non_null(a.group);
	assert_int_equal(ilab_iommu_group_refcount(a.group), 2);
	ilab_iommu_release_device(&a);
}

static void lookups_agree_and_refcount_balances(void **state)
{
	struct tu *t = *state;
	struct ilab_dev d;
	struct ilab_dma_options o;
	struct ilab_dma_stats st;
	ilab_pa_t pa = tu_buffer(t, 0, 0, 2);
	unsigned before;
	const unsigned n = 100;

	tu_dev_init(t, &d, "d", 8, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
	assert_ptr_equal(ilab_iommu_get_domain_for_dev(&d), ilab_iommu_get_dma_domain(&d));

	ilab_dma_options_default(&o);
	o.lookup = ILAB_DMA_LOOKUP_REFCOUNT;
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	before = ilab_iommu_group_refcount(d.group);
	for (unsigned i = 0; i < n; i++) {
		ilab_dma_addr_t a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_TO_DEVICE);

		assert_false(ilab_dma_mapping_error(a));
		ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_TO_DEVICE);
	}
	assert_int_equal(ilab_iommu_group_refcount(d.group), before);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	/* one lookup per map and one per unmap, each a get and a put */
	assert_int_equal(st.refcount_lookups, 2 * n);
	assert_int_equal(st.direct_lookups, 0);
	assert_int_equal(st.maps, n);
	assert_int_equal(st.unmaps, n);

	o.lookup = ILAB_DMA_LOOKUP_DIRECT;
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	ilab_dma_unmap_single(&d, ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_TO_DEVICE), 4096,
			      ILAB_DMA_TO_DEVICE);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.direct_lookups, 2);
	assert_int_equal(ilab_iommu_group_refcount(d.group), before);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(t->mem, pa, 0);
}

static void bad_input_is_refused(void **state)
{
	struct tu *t = *state;
	struct ilab_dev d, noiommu;
	struct ilab_dma_options o;

	tu_dev_init(t, &d, "d", 9, 0, 48);
	memset(&noiommu, 0, sizeof(noiommu));
	assert_int_equal(ilab_iommu_probe_device(&noiommu, ILAB_DOMAIN_DMA), -EINVAL);
	assert_int_equal(ilab_iommu_probe_device(NULL, ILAB_DOMAIN_DMA), -EINVAL);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_UNMANAGED), -EINVAL);
	assert_int_equal(ilab_iommu_probe_device(&d, (enum ilab_domain_type)42), -EINVAL);
	tu_dev_init(t, &d, "badsid", 1000, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), -ENODEV);
	assert_non_null(strstr(ilab_iommu_strerror(), "badsid"));
	assert_null(d.group);

	tu_dev_init(t, &d, "d", 9, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), -EBUSY);
	ilab_dma_options_default(&o);
	o.fq_size = 100; /* not a power of two */
	assert_int_equal(ilab_dma_configure(&d, &o), -EINVAL);
	ilab_dma_options_default(&o);
	o.lookup = (enum ilab_dma_lookup)7;
	assert_int_equal(ilab_dma_configure(&d, &o), -EINVAL);
	assert_null(ilab_iommu_domain_alloc(NULL, ILAB_DOMAIN_DMA, -1));
	assert_int_equal(ilab_iommu_attach_group(NULL, d.group), -EINVAL);
	ilab_iommu_release_device(&d);
	ilab_iommu_release_device(&d); /* twice: harmless */
	assert_null(ilab_iommu_get_dma_domain(&d));
	assert_null(ilab_iommu_get_domain_for_dev(&d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_gives_one_group_per_device),
		cmocka_unit_test(default_domain_types),
		cmocka_unit_test(fq_falls_back_to_strict_without_flush_all),
		cmocka_unit_test(attach_and_detach_unmanaged),
		cmocka_unit_test(shared_group),
		cmocka_unit_test(lookups_agree_and_refcount_balances),
		cmocka_unit_test(bad_input_is_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
