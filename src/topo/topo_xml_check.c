/* topo_xml_check.c — what an hwloc XML text must hold before hwloc may parse it: the attributes
 * whose absence crashes libhwloc 2.9, NUMA node count and memory sizes that hwloc would accept
 * or misread. A scan of the <object> tags' attributes, not an XML parser: hwloc judges the rest
 * of the syntax afterwards.
 */
#include "topo/topo_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The attributes of one <object> tag that the checks look at; a value is NULL when absent. */
struct xml_obj {
	const char *type, *local_memory;
	size_t type_len, local_memory_len;
	bool cpuset, complete_cpuset, nodeset, complete_nodeset;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == ':' || c == '.';
}

static bool attr_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(name, want, len) == 0;
}

static void note_attr(struct xml_obj *o, const char *name, size_t nlen, const char *val,
		      size_t vlen)
{
	if (attr_is(name, nlen, "type")) {
		o->type = val;
		o->type_len = vlen;
	} else if (attr_is(name, nlen, "local_memory")) {
		o->local_memory = val;
		o->local_memory_len = vlen;
	} else if (attr_is(name, nlen, "cpuset")) {
		o->cpuset = true;
	} else if (attr_is(name, nlen, "complete_cpuset")) {
		o->complete_cpuset = true;
	} else if (attr_is(name, nlen, "nodeset")) {
		o->nodeset = true;
	} else if (attr_is(name, nlen, "complete_nodeset")) {
		o->complete_nodeset = true;
	}
}

/* Read the attributes of the tag whose name ends at p. Returns the end of the tag, or NULL when
 * they are not a list of name="value" or name='value'. */
static const char *scan_attrs(const char *p, struct xml_obj *o)
{
	for (;;) {
		const char *name, *val;
		char quote;

		while (is_space(*p))
			p++;
		if (*p == '>' || (p[0] == '/' && p[1] == '>'))
			return p;
		name = p;
		while (is_name_char(*p))
			p++;
		if (p == name)
			return NULL;
		size_t nlen = (size_t)(p - name);
		while (is_space(*p))
			p++;
		if (*p++ != '=')
			return NULL;
		while (is_space(*p))
			p++;
		quote = *p++;
		if (quote != '"' && quote != '\'')
			return NULL;
		val = p;
		p = strchr(p, quote);
		if (!p)
			return NULL;
		note_attr(o, name, nlen, val, (size_t)(p - val));
		p++;
	}
}

static bool type_is(const struct xml_obj *o, const char *want)
{
	return o->type && attr_is(o->type, o->type_len, want);
}

/* A NUMA node's size in bytes: digits only (hwloc reads "-1" as 2^64-1 and "16GB" as 16), at
 * most 2^52, the largest physical address space of arm64 (52-bit PA) and x86-64 (MAXPHYADDR
 * 52). Zero is a memoryless node, which Linux has. */
static int check_local_memory(const char *name, unsigned line, const struct xml_obj *o, char *err,
			      size_t errlen)
{
	int shown = (int)(o->local_memory_len > 40 ? 40 : o->local_memory_len);
	unsigned long long v = 0;

	for (size_t i = 0; i < o->local_memory_len; i++) {
		char c = o->local_memory[i];

		if (c < '0' || c > '9')
			v = ~0ull;
		else if (v <= TOPO_MAX_NODE_MEMORY) /* saturates above the limit: no overflow */
			v = v * 10 + (unsigned)(c - '0');
		if (v == ~0ull)
			break;
	}
	if (o->local_memory_len == 0 || v == ~0ull)
		return topo_fail(err, errlen, EINVAL,
				 "%s:%u: NUMANode local_memory=\"%.*s\" is not a size in bytes", name,
				 line, shown, o->local_memory);
	if (v > TOPO_MAX_NODE_MEMORY)
		return topo_fail(err, errlen, EINVAL,
				 "%s:%u: NUMANode local_memory=\"%.*s\" is more than 4 PiB (2^52 bytes, a 52-bit physical address space)",
				 name, line, shown, o->local_memory);
	return 0;
}

/* hwloc 2.9 dereferences an object's complete_cpuset (complete_nodeset) whenever it has a cpuset
 * (nodeset), without checking: found by deleting each attribute of the Machine, Package,
 * NUMANode and PU objects of tests/data/topologies/ in turn. lstopo always writes both. */
static int check_object(const char *name, unsigned line, const struct xml_obj *o, char *err,
			size_t errlen)
{
	const char *missing = NULL;

	if (o->cpuset && !o->complete_cpuset)
		missing = "cpuset but no complete_cpuset";
	else if (o->nodeset && !o->complete_nodeset)
		missing = "nodeset but no complete_nodeset";
	if (missing)
		return topo_fail(err, errlen, EINVAL,
				 "%s:%u: %.*s object has a %s, which hwloc needs (export the file again with lstopo)",
				 name, line, o->type ? (int)(o->type_len > 20 ? 20 : o->type_len) : 7,
				 o->type ? o->type : "untyped", missing);
	if (type_is(o, "NUMANode") && o->local_memory)
		return check_local_memory(name, line, o, err, errlen);
	return 0;
}

int topo_check_xml_objects(const char *name, const char *buf, char *err, size_t errlen)
{
	static const char tag[] = "<object";
	const char *p = buf, *line_from = buf;
	unsigned line = 1, nr_nodes = 0;

	while ((p = strchr(p, '<'))) {
		struct xml_obj o = { 0 };
		const char *end;

		for (; line_from < p; line_from++)
			line += *line_from == '\n';
		if (strncmp(p, "<!--", 4) == 0) {
			end = strstr(p + 4, "-->");
			if (!end)
				return topo_fail(err, errlen, EINVAL,
						 "%s:%u: cannot parse hwloc XML (a comment is not closed)",
						 name, line);
			p = end + 3;
			continue;
		}
		if (strncmp(p, tag, sizeof(tag) - 1) != 0 || !is_space(p[sizeof(tag) - 1])) {
			p++;
			continue;
		}
		/* hwloc's built-in parser reads on past a broken attribute; with more damage
		 * around it, that crashed hwloc under the fuzzer. A tag we cannot follow is
		 * refused, as libxml2 would refuse it. */
		end = scan_attrs(p + sizeof(tag) - 1, &o);
		if (!end)
			return topo_fail(err, errlen, EINVAL,
					 "%s:%u: cannot parse hwloc XML (an <object> tag whose attributes are not name=\"value\")",
					 name, line);
		int ret = check_object(name, line, &o, err, errlen);
		if (ret)
			return ret;
		nr_nodes += type_is(&o, "NUMANode");
		p = end;
	}
	/* Before hwloc sees the file, so that the limit is the reason given whatever else hwloc
	 * would make of so many nodes. */
	if (nr_nodes > ILAB_TOPO_MAX_NODES)
		return topo_fail(err, errlen, E2BIG, "%s: %u NUMA nodes, at most %d are supported",
				 name, nr_nodes, ILAB_TOPO_MAX_NODES);
	return 0;
}
