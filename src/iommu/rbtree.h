/* rbtree.h — an intrusive red-black tree (Linux lib/rbtree.c style: the node lives inside the
 * caller's struct, the caller does the ordered descent and links the node, the tree rebalances).
 * It is not a container: no keys, no allocation, no locking; callers compare and lock.
 */
#ifndef IOMMULAB_RBTREE_H
#define IOMMULAB_RBTREE_H

#include <stddef.h>

/* The node and root types are declared in the public iova.h because struct ilab_iova embeds a
 * node; this header holds the operations. */
#include <iommulab/iova.h>

#define ilab_rb_entry(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Link `node` as child `*link` of `parent` (found by the caller's descent), then rebalance. */
void ilab_rb_link_node(struct ilab_rb_node *node, struct ilab_rb_node *parent,
		       struct ilab_rb_node **link);
void ilab_rb_insert_color(struct ilab_rb_node *node, struct ilab_rb_root *root);
void ilab_rb_erase(struct ilab_rb_node *node, struct ilab_rb_root *root);

struct ilab_rb_node *ilab_rb_first(const struct ilab_rb_root *root);
struct ilab_rb_node *ilab_rb_last(const struct ilab_rb_root *root);
struct ilab_rb_node *ilab_rb_next(const struct ilab_rb_node *node);
struct ilab_rb_node *ilab_rb_prev(const struct ilab_rb_node *node);

/* Debug check of the red-black invariants; returns the black height, or -1 if broken. */
int ilab_rb_check(const struct ilab_rb_root *root);

#endif /* IOMMULAB_RBTREE_H */
