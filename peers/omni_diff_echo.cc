// omniORB C++ peer of the differential harness (crates/corbina-testpeers/src/differential):
//   omni_diff_echo IORFILE [LIFETIME_S] [-ORB options]
// serves dt::AnyEcho (peers/differential.idl). An omniORB Any of a type the program has no
// stubs for may keep the value's bytes and send them on unread; echo() decodes it fully
// instead (DynamicAny: create_dyn_any walks the TypeCode over the value, to_any encodes it
// again) and returns that. Values whose TypeCode holds a valuetype are the exception: omniORB
// 4.2.5's DynAny recurses without end on a cyclic value graph (it segfaults), so those are
// returned as omniORB's Any holds them: already walked by its TypeCode-driven unmarshaller
// (tcParser) into omniORB's own encoding, not the bytes received. Exits by itself after LIFETIME_S (default 600).
#include <omniORB4/CORBA.h>
#include <omniORB4/dynAny.h>

#include <cstdlib>
#include <iostream>

#include "diff_serve.h"
#include "differential.hh"

static DynamicAny::DynAnyFactory_var g_factory;

// Whether tc holds a valuetype or value box anywhere (depth-bounded: recursive TypeCodes).
static bool has_value(CORBA::TypeCode_ptr tc, int depth = 0) {
  if (depth > 32) return false;
  switch (tc->kind()) {
  case CORBA::tk_value:
  case CORBA::tk_value_box:
  case CORBA::tk_abstract_interface:
    return true;
  case CORBA::tk_struct:
  case CORBA::tk_except:
  case CORBA::tk_union:
    for (CORBA::ULong i = 0; i < tc->member_count(); ++i) {
      CORBA::TypeCode_var m = tc->member_type(i);
      if (has_value(m, depth + 1)) return true;
    }
    return false;
  case CORBA::tk_sequence:
  case CORBA::tk_array:
  case CORBA::tk_alias: {
    CORBA::TypeCode_var c = tc->content_type();
    return has_value(c, depth + 1);
  }
  default:
    return false;
  }
}

// ThingNode's state as omniidl generates it (OBV_dt::ThingNode), and its factory.
class ThingNodeImpl : public OBV_dt::ThingNode, public CORBA::DefaultValueRefCountBase {};

class ThingNodeFactory : public CORBA::ValueFactoryBase {
public:
  CORBA::ValueBase* create_for_unmarshal() override { return new ThingNodeImpl; }
};

class EchoImpl : public POA_dt::AnyEcho {
public:
  CORBA::Any* echo(const CORBA::Any& a) override {
    CORBA::TypeCode_var tc = a.type();
    if (has_value(tc)) return new CORBA::Any(a);
    DynamicAny::DynAny_var d = g_factory->create_dyn_any(a);
    CORBA::Any_var out = d->to_any();
    d->destroy();
    return out._retn();
  }
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    if (argc < 2) {
      std::cerr << "usage: omni_diff_echo IORFILE [LIFETIME_S] [-ORB options]\n";
      return 2;
    }
    int lifetime = argc > 2 ? std::atoi(argv[2]) : 600;
    CORBA::Object_var fo = orb->resolve_initial_references("DynAnyFactory");
    g_factory = DynamicAny::DynAnyFactory::_narrow(fo);
    // The IDL's own value type is built as such (other value types through DynAny).
    CORBA::ValueFactoryBase_var f = new dt::LabelNode_init;
    orb->register_value_factory(dt::LabelNode::_PD_repoId, f);
    // An abstract interface's TypeCode does not name its value's type: the harness's is
    // ThingNode (omniidl makes no ThingNode_init for a value supporting an interface).
    CORBA::ValueFactoryBase_var tf = new ThingNodeFactory;
    orb->register_value_factory(dt::ThingNode::_PD_repoId, tf);

    diff_serve(orb, new EchoImpl, argv[1], lifetime);
  } catch (CORBA::Exception& e) {
    std::cerr << "omni_diff_echo: " << e._name() << "\n";
    return 1;
  }
  return 0;
}
