/* rbtree.c — intrusive red-black tree operations (insert rebalance, erase, in-order stepping).
 * It is not an ordered map: callers find the insertion point themselves, as with Linux rbtree.
 *
 * The algorithm is the textbook one (CLRS chapter 13) with parent pointers and an explicit
 * colour field; no sentinel node, so NULL children are black.
 */
#include "iommu/rbtree.h"

#define RB_RED 0
#define RB_BLACK 1

static inline int is_red(const struct ilab_rb_node *n)
{
	return n && n->color == RB_RED;
}

void ilab_rb_link_node(struct ilab_rb_node *node, struct ilab_rb_node *parent,
		       struct ilab_rb_node **link)
{
	node->parent = parent;
	node->left = node->right = NULL;
	node->color = RB_RED;
	*link = node;
}

/* Replace `old` by `new` in old's parent (or as root). */
static void change_child(struct ilab_rb_node *old, struct ilab_rb_node *new,
			 struct ilab_rb_node *parent, struct ilab_rb_root *root)
{
	if (!parent)
		root->node = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

static void rotate_left(struct ilab_rb_node *x, struct ilab_rb_root *root)
{
	struct ilab_rb_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	y->parent = x->parent;
	change_child(x, y, x->parent, root);
	y->left = x;
	x->parent = y;
}

static void rotate_right(struct ilab_rb_node *x, struct ilab_rb_root *root)
{
	struct ilab_rb_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	y->parent = x->parent;
	change_child(x, y, x->parent, root);
	y->right = x;
	x->parent = y;
}

void ilab_rb_insert_color(struct ilab_rb_node *z, struct ilab_rb_root *root)
{
	while (is_red(z->parent)) {
		struct ilab_rb_node *p = z->parent, *g = p->parent;

		if (p == g->left) {
			struct ilab_rb_node *u = g->right;

			if (is_red(u)) {
				p->color = u->color = RB_BLACK;
				g->color = RB_RED;
				z = g;
				continue;
			}
			if (z == p->right) {
				z = p;
				rotate_left(z, root);
				p = z->parent;
			}
			p->color = RB_BLACK;
			g->color = RB_RED;
			rotate_right(g, root);
		} else {
			struct ilab_rb_node *u = g->left;

			if (is_red(u)) {
				p->color = u->color = RB_BLACK;
				g->color = RB_RED;
				z = g;
				continue;
			}
			if (z == p->left) {
				z = p;
				rotate_right(z, root);
				p = z->parent;
			}
			p->color = RB_BLACK;
			g->color = RB_RED;
			rotate_left(g, root);
		}
	}
	root->node->color = RB_BLACK;
}

/* Put v where u was (u's subtree pointer in u's parent). */
static void transplant(struct ilab_rb_node *u, struct ilab_rb_node *v, struct ilab_rb_root *root)
{
	change_child(u, v, u->parent, root);
	if (v)
		v->parent = u->parent;
}

/* Restore the black height after removing a black node; x (maybe NULL) took its place under
 * parent xp. */
static void erase_fixup(struct ilab_rb_node *x, struct ilab_rb_node *xp, struct ilab_rb_root *root)
{
	while (x != root->node && !is_red(x)) {
		if (x == xp->left) {
			struct ilab_rb_node *w = xp->right;

			if (is_red(w)) {
				w->color = RB_BLACK;
				xp->color = RB_RED;
				rotate_left(xp, root);
				w = xp->right;
			}
			if (!is_red(w->left) && !is_red(w->right)) {
				w->color = RB_RED;
				x = xp;
				xp = x->parent;
			} else {
				if (!is_red(w->right)) {
					w->left->color = RB_BLACK;
					w->color = RB_RED;
					rotate_right(w, root);
					w = xp->right;
				}
				w->color = xp->color;
				xp->color = RB_BLACK;
				if (w->right)
					w->right->color = RB_BLACK;
				rotate_left(xp, root);
				x = root->node;
				xp = NULL;
			}
		} else {
			struct ilab_rb_node *w = xp->left;

			if (is_red(w)) {
				w->color = RB_BLACK;
				xp->color = RB_RED;
				rotate_right(xp, root);
				w = xp->left;
			}
			if (!is_red(w->left) && !is_red(w->right)) {
				w->color = RB_RED;
				x = xp;
				xp = x->parent;
			} else {
				if (!is_red(w->left)) {
					w->right->color = RB_BLACK;
					w->color = RB_RED;
					rotate_left(w, root);
					w = xp->left;
				}
				w->color = xp->color;
				xp->color = RB_BLACK;
				if (w->left)
					w->left->color = RB_BLACK;
				rotate_right(xp, root);
				x = root->node;
				xp = NULL;
			}
		}
	}
	if (x)
		x->color = RB_BLACK;
}

void ilab_rb_erase(struct ilab_rb_node *z, struct ilab_rb_root *root)
{
	struct ilab_rb_node *x, *xp;
	int removed_color = z->color;

	if (!z->left) {
		x = z->right;
		xp = z->parent;
		transplant(z, z->right, root);
	} else if (!z->right) {
		x = z->left;
		xp = z->parent;
		transplant(z, z->left, root);
	} else {
		struct ilab_rb_node *y = z->right;

		while (y->left)
			y = y->left;
		removed_color = y->color;
		x = y->right;
		if (y->parent == z) {
			xp = y;
		} else {
			xp = y->parent;
			transplant(y, y->right, root);
			y->right = z->right;
			y->right->parent = y;
		}
		transplant(z, y, root);
		y->left = z->left;
		y->left->parent = y;
		y->color = z->color;
	}
	if (removed_color == RB_BLACK)
		erase_fixup(x, xp, root);
	z->parent = z->left = z->right = NULL;
}

struct ilab_rb_node *ilab_rb_first(const struct ilab_rb_root *root)
{
	struct ilab_rb_node *n = root->node;

	while (n && n->left)
		n = n->left;
	return n;
}

struct ilab_rb_node *ilab_rb_last(const struct ilab_rb_root *root)
{
	struct ilab_rb_node *n = root->node;

	while (n && n->right)
		n = n->right;
	return n;
}

struct ilab_rb_node *ilab_rb_next(const struct ilab_rb_node *n)
{
	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct ilab_rb_node *)n;
	}
	while (n->parent && n == n->parent->right)
		n = n->parent;
	return n->parent;
}

struct ilab_rb_node *ilab_rb_prev(const struct ilab_rb_node *n)
{
	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct ilab_rb_node *)n;
	}
	while (n->parent && n == n->parent->left)
		n = n->parent;
	return n->parent;
}

static int check(const struct ilab_rb_node *n, const struct ilab_rb_node *parent)
{
	int l, r;

	if (!n)
		return 1;
	if (n->parent != parent)
		return -1;
	if (is_red(n) && (is_red(n->left) || is_red(n->right)))
		return -1;
	l = check(n->left, n);
	r = check(n->right, n);
	if (l < 0 || r < 0 || l != r)
		return -1;
	return l + (n->color == RB_BLACK);
}

int ilab_rb_check(const struct ilab_rb_root *root)
{
	if (is_red(root->node))
		return -1;
	return check(root->node, NULL);
}
