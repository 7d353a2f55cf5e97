#!/usr/bin/env python3
"""omniORBpy peer of the differential harness (crates/corbina-testpeers/src/differential).

  differential_omnipy.py server IORFILE [-ORB...]
      serves dt::AnyEcho (peers/differential.idl): echo(a) returns a. omniORBpy turns the Any
      into Python objects (classes made from the TypeCodes of unknown types) and marshals
      them again, so nothing travels as raw bytes.
  differential_omnipy.py client IOR SEED CASES [-ORB...]
      the other way: CASES random TypeCodes and values made here from SEED, sent to the
      echo object at IOR (Corbina's), and compared with what comes back. One JSON line per
      case: {"seed": s, "ok": true} or {"seed": s, "ok": false, "why": ..., "idl": ...}.
  differential_omnipy.py nodes IOR [-ORB...]
      issue 27 item 1: dt::LabelNode lists, cycles and lassos of 1, 2 and 5 nodes with labels
      of every length 0-9, sent as Anys and compared (sharing and cycles kept), one JSON
      line each.

The generator avoids omniORBpy 4.3.3's known defects (see KNOWN in the Rust harness): no
union whose default member comes first, no wchar, no unsigned long long >= 2^63 in
sequences, only ASCII in bounded strings, no long double.
"""

import json
import os
import random
import sys

from omniORB import CORBA, PortableServer
import omniORB
from omniORB import tcInternal

HERE = os.path.dirname(os.path.abspath(__file__))
# importIDL runs `omniidl` from PATH: this venv's, with its Python back-end (Debian's omniidl
# has only the C++ one).
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
omniORB.importIDL(os.path.join(HERE, "differential.idl"))
import dt  # noqa: E402
import dt__POA  # noqa: E402


class Echo(dt__POA.AnyEcho):
    def echo(self, a):
        # The Any is already decoded (into Python objects) here; it is encoded again when
        # returned. An exception raised in either is logged for triage.
        return a


def orb_args(rest):
    return [sys.argv[0], "-ORBnativeCharCodeSet", "UTF-8"] + rest


def serve(ior_file, rest):
    orb = CORBA.ORB_init(orb_args(rest + ["-ORBendPoint", "giop:tcp:127.0.0.1:"]))
    poa = orb.resolve_initial_references("RootPOA")
    ref = poa.servant_to_reference(Echo())
    poa._get_the_POAManager().activate()
    tmp = ior_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(orb.object_to_string(ref))
    os.rename(tmp, ior_file)
    orb.run()


def mc(tc):
    # omniORBpy 4.3.3's member_count() of a TypeCode made by create_struct_tc is a float
    # ((len - 4) / 2): counted as an int here.
    return int(tc.member_count())


class Gen:
    """Random TypeCodes and values (a subset of the Rust generator's kinds)."""

    def __init__(self, orb, seed):
        self.orb = orb
        self.r = random.Random(seed)
        self.n = 0

    def fresh(self, p):
        self.n += 1
        name = "P%s%d" % (p, self.n)
        return "IDL:dtpy/%s:1.0" % name, name

    def prim(self):
        k = self.r.randrange(12)
        tc = CORBA
        return [
            tc.TC_short, tc.TC_ushort, tc.TC_long, tc.TC_ulong, tc.TC_longlong,
            tc.TC_ulonglong, tc.TC_double, tc.TC_boolean, tc.TC_octet, tc.TC_char,
            None, None,
        ][k] or (self.string_tc() if k == 10 else self.enum_tc())

    def string_tc(self):
        return self.orb.create_string_tc(self.r.choice([0, 0, 0, 3, 8]))

    def enum_tc(self):
        i, n = self.fresh("E")
        # omniORBpy 4.3.3's create_enum_tc makes items without the _parent_id that hashing
        # them needs (it raises AttributeError): the descriptor is made here instead.
        items = []
        for k in range(self.r.randint(1, 5)):
            item = omniORB.EnumItem("%s_e%d" % (n, k), k)
            item._parent_id = i
            items.append(item)
        return tcInternal.createTypeCode((tcInternal.tv_enum, i, n, tuple(items)))

    def ty(self, depth):
        if depth == 0 or self.r.random() < 0.3:
            return self.prim()
        d = depth - 1
        k = self.r.randrange(8)
        if k in (0, 1):
            i, n = self.fresh("S")
            ms = [CORBA.StructMember("m%d" % j, self.ty(d), None) for j in range(self.r.randint(1, 4))]
            return self.orb.create_struct_tc(i, n, ms)
        if k == 2:
            return self.union_tc(d)
        if k == 3:
            return self.orb.create_sequence_tc(self.r.choice([0, 0, 3]), self.ty(d))
        if k == 4:
            return self.orb.create_array_tc(self.r.randint(1, 3), self.ty(d))
        if k == 5:
            i, n = self.fresh("A")
            return self.orb.create_alias_tc(i, n, self.ty(d))
        if k == 6:
            return CORBA.TC_any
        return self.prim()

    def union_tc(self, d):
        i, n = self.fresh("U")
        # Enum discriminators: omniORBpy 4.3.3 raises INTERNAL making such a union TypeCode.
        kind = self.r.randrange(3)
        if kind == 0:
            dt_, lo, hi = CORBA.TC_long, -(2 ** 31), 2 ** 31 - 1
        elif kind == 1:
            dt_, lo, hi = CORBA.TC_ushort, 0, 65535
        elif kind == 2:
            dt_, lo, hi = CORBA.TC_boolean, 0, 1
        else:
            dt_ = self.enum_tc()
            lo, hi = 0, mc(dt_) - 1
        labels = []
        for _ in range(self.r.randint(1, 3)):
            v = self.r.choice([lo, hi, self.r.randint(lo, hi)])
            if v not in labels:
                labels.append(v)
        ms = []
        for j, v in enumerate(labels):
            ms.append(CORBA.UnionMember("u%d" % j, self.label_any(dt_, v), self.ty(d), None))
        if len(labels) < hi - lo + 1 and self.r.random() < 0.5:
            # Never first: omniORBpy 4.3.3 segfaults on a default member in first place.
            ms.append(CORBA.UnionMember("def", CORBA.Any(CORBA.TC_octet, 0), self.ty(d), None))
        return self.orb.create_union_tc(i, n, dt_, ms)

    def label_any(self, dt_, v):
        k = dt_.kind()
        if k == CORBA.tk_boolean:
            return CORBA.Any(dt_, bool(v))
        if k == CORBA.tk_enum:
            return CORBA.Any(dt_, dt_._d[3][v])
        return CORBA.Any(dt_, v)

    def val(self, tc, budget=6):
        r = self.r
        k = tc.kind()
        if k == CORBA.tk_alias:
            return self.val(tc.content_type(), budget)
        if k == CORBA.tk_short:
            return r.choice([-32768, 32767, 0, r.randint(-32768, 32767)])
        if k == CORBA.tk_ushort:
            return r.choice([0, 65535, r.randint(0, 65535)])
        if k == CORBA.tk_long:
            return r.choice([-(2 ** 31), 2 ** 31 - 1, r.randint(-(2 ** 31), 2 ** 31 - 1)])
        if k == CORBA.tk_ulong:
            return r.choice([0, 2 ** 32 - 1, r.randint(0, 2 ** 32 - 1)])
        if k == CORBA.tk_longlong:
            return r.choice([-(2 ** 63), 2 ** 63 - 1, r.randint(-(2 ** 63), 2 ** 63 - 1)])
        if k == CORBA.tk_ulonglong:
            return r.choice([0, 2 ** 63 - 1, r.randint(0, 2 ** 63 - 1)])
        if k == CORBA.tk_double:
            return r.choice([0.0, -0.0, 1.5, r.uniform(-1e300, 1e300)])
        if k == CORBA.tk_boolean:
            return r.random() < 0.5
        if k == CORBA.tk_octet:
            return r.randint(0, 255)
        if k == CORBA.tk_char:
            return chr(r.randint(32, 126))
        if k == CORBA.tk_string:
            b = tc.length()
            n = r.randint(0, 9) if b == 0 else r.randint(0, b)
            if b:
                return "".join(chr(r.randint(32, 126)) for _ in range(n))
            return "".join(chr(r.choice([r.randint(32, 126), r.randint(0xa0, 0x7ff)])) for _ in range(n))
        if k == CORBA.tk_enum:
            return tc._d[3][r.randrange(mc(tc))]
        if k == CORBA.tk_struct:
            vals = [self.val(tc.member_type(i), budget - 1) for i in range(mc(tc))]
            return tc._d[1](*vals)
        if k == CORBA.tk_union:
            n = mc(tc)
            default = tc.default_index()
            explicit = [i for i in range(n) if i != default]
            i = r.choice(explicit) if explicit and (default < 0 or r.random() < 0.7) else default
            if i == default:
                d = self.unused_label(tc, explicit)
                if d is None:
                    i = explicit[0]
            if i != default:
                d = tc.member_label(i).value()
            return tc._d[1](d, self.val(tc.member_type(i), budget - 1))
        if k in (CORBA.tk_sequence, CORBA.tk_array):
            et = tc.content_type()
            if k == CORBA.tk_array:
                n = tc.length()
            else:
                n = r.randint(0, 4) if budget > 0 else 0
                if tc.length():
                    n = min(n, tc.length())
            items = [self.val(et, budget - 1) for _ in range(n)]
            # omniORBpy takes bytes/str for octet/char elements, and only a list when the
            # element type is an alias of them.
            ek = et.kind()
            if ek == CORBA.tk_octet:
                return bytes(items)
            if ek == CORBA.tk_char:
                return "".join(items)
            return items
        if k == CORBA.tk_any:
            t = self.ty(1) if budget > 0 else CORBA.TC_long
            return CORBA.Any(t, self.val(t, budget - 1))
        raise ValueError("no values of kind %s" % k)

    def unused_label(self, tc, explicit):
        used = [tc.member_label(i).value() for i in explicit]
        dk = tc.discriminator_type()
        for _ in range(20):
            if dk.kind() == CORBA.tk_boolean:
                v = self.r.random() < 0.5
            elif dk.kind() == CORBA.tk_enum:
                v = dk._d[3][self.r.randrange(mc(dk))]
            elif dk.kind() == CORBA.tk_ushort:
                v = self.r.randint(0, 65535)
            else:
                v = self.r.randint(-(2 ** 31), 2 ** 31 - 1)
            if v not in used:
                return v
        return None


def same(tc, a, b, path, seen):
    """Why a and b differ as values of tc (None: they do not)."""
    k = tc.kind()
    if k == CORBA.tk_alias:
        return same(tc.content_type(), a, b, path, seen)
    if k == CORBA.tk_struct:
        for i in range(mc(tc)):
            n = tc.member_name(i)
            w = same(tc.member_type(i), getattr(a, n), getattr(b, n), path + "." + n, seen)
            if w:
                return w
        return None
    if k == CORBA.tk_union:
        if a._d != b._d:
            return "%s: discriminator %r sent, %r got" % (path, a._d, b._d)
        i = None
        for j in range(mc(tc)):
            if j != tc.default_index() and tc.member_label(j).value() == a._d:
                i = j
        if i is None:
            i = tc.default_index()
        if i < 0:
            return None
        return same(tc.member_type(i), a._v, b._v, path + "." + tc.member_name(i), seen)
    if k in (CORBA.tk_sequence, CORBA.tk_array):
        if len(a) != len(b):
            return "%s: %d elements sent, %d got" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            w = same(tc.content_type(), x, y, "%s[%d]" % (path, i), seen)
            if w:
                return w
        return None
    if k == CORBA.tk_any:
        if not a.typecode().equivalent(b.typecode()):
            return "%s: inner TypeCode differs" % path
        return same(a.typecode(), a.value(), b.value(), path + "<any>", seen)
    if k == CORBA.tk_enum:
        return None if a._v == b._v else "%s: %r sent, %r got" % (path, a, b)
    if k == CORBA.tk_value:
        if (a is None) != (b is None):
            return "%s: null-ness differs" % path
        if a is None:
            return None
        ia, ib = id(a), id(b)
        if ia in seen[0] or ib in seen[1]:
            if seen[0].get(ia) == ib and seen[1].get(ib) == ia:
                return None
            return "%s: sharing differs" % path
        seen[0][ia] = ib
        seen[1][ib] = ia
        for i in range(mc(tc)):
            n = tc.member_name(i)
            w = same(tc.member_type(i), getattr(a, n), getattr(b, n), path + "." + n, seen)
            if w:
                return w
        return None
    if k == CORBA.tk_double and a != a and b != b:
        return None
    return None if a == b and type(a) is type(b) else "%s: %r sent, %r got" % (path, a, b)


def echo_and_compare(echo, tc, v):
    try:
        back = echo.echo(CORBA.Any(tc, v))
    except Exception as e:  # noqa: BLE001 - any failure is reported, not raised
        return "echo raised %r" % (e,)
    if not back.typecode().equivalent(tc):
        return "TypeCode differs: %s" % back.typecode().id() if back.typecode().kind() in (
            CORBA.tk_struct, CORBA.tk_union) else "TypeCode differs"
    return same(tc, v, back.value(), "$", ({}, {}))


def describe(tc, depth=0):
    k = tc.kind()
    if depth > 6:
        return "..."
    if k in (CORBA.tk_struct, CORBA.tk_except):
        return "struct %s { %s }" % (tc.name(), " ".join(
            "%s %s;" % (describe(tc.member_type(i), depth + 1), tc.member_name(i)) for i in range(mc(tc))))
    if k == CORBA.tk_union:
        return "union %s switch (%s) { %s }" % (tc.name(), describe(tc.discriminator_type(), depth + 1), " ".join(
            "%s: %s %s;" % ("default" if i == tc.default_index() else "case %r" % (tc.member_label(i).value(),),
                            describe(tc.member_type(i), depth + 1), tc.member_name(i))
            for i in range(mc(tc))))
    if k in (CORBA.tk_sequence, CORBA.tk_array):
        return "%s<%s, %d>" % ("sequence" if k == CORBA.tk_sequence else "array",
                               describe(tc.content_type(), depth + 1), tc.length())
    if k == CORBA.tk_alias:
        return "typedef %s %s" % (describe(tc.content_type(), depth + 1), tc.name())
    if k == CORBA.tk_enum:
        return "enum %s(%d)" % (tc.name(), mc(tc))
    if k == CORBA.tk_string:
        return "string<%d>" % tc.length()
    return str(k)


def client(ior, seed, cases, rest):
    orb = CORBA.ORB_init(orb_args(rest))
    echo = orb.string_to_object(ior)._narrow(dt.AnyEcho)
    for s in range(seed, seed + cases):
        g = Gen(orb, s)
        try:
            tc = g.ty(3)
            v = g.val(tc)
        except Exception as e:  # noqa: BLE001
            print(json.dumps({"seed": s, "ok": False, "why": "generator: %r" % (e,), "idl": ""}), flush=True)
            continue
        why = echo_and_compare(echo, tc, v)
        out = {"seed": s, "ok": why is None}
        if why:
            out["why"] = why
            out["idl"] = describe(tc)
            out["value"] = repr(v)[:2000]
        print(json.dumps(out), flush=True)
    orb.destroy()


def nodes(ior, rest):
    orb = CORBA.ORB_init(orb_args(rest))
    echo = orb.string_to_object(ior)._narrow(dt.AnyEcho)
    tc = CORBA.TypeCode(CORBA.id(dt.LabelNode))
    for shape in ("list", "cycle", "lasso"):
        for length in range(10):
            for n in (1, 2, 5):
                ns = [dt.LabelNode(i + 1, "".join(chr(97 + (i + k) % 26) for k in range(length)), None)
                      for i in range(n)]
                for a, b in zip(ns, ns[1:]):
                    a.next = b
                if shape == "cycle":
                    ns[-1].next = ns[0]
                elif shape == "lasso":
                    ns[-1].next = ns[n // 2]
                why = echo_and_compare(echo, tc, ns[0])
                out = {"case": "%s n=%d label=%d" % (shape, n, length), "ok": why is None}
                if why:
                    out["why"] = why
                print(json.dumps(out), flush=True)
    orb.destroy()


def main():
    a = sys.argv[1:]
    if a[:1] == ["server"]:
        serve(a[1], a[2:])
    elif a[:1] == ["client"]:
        client(a[1], int(a[2]), int(a[3]), a[4:])
    elif a[:1] == ["nodes"]:
        nodes(a[1], a[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
