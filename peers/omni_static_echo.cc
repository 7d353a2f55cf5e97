// omniORB C++ peer of the differential harness's static types (peers/differential_static.idl):
//   omni_static_echo IORFILE [LIFETIME_S] [-ORB options]
// serves dts::StaticEcho, whose operations take one `inout` parameter and leave it as it
// came: omniORB's generated skeleton unmarshals it into the C++ mapping's types and marshals
// it back. Exits by itself after LIFETIME_S (default 600).
#include <omniORB4/CORBA.h>

#include <cstdlib>
#include <iostream>

#include "diff_serve.h"
#include "differential_static.hh"

class StaticEchoImpl : public POA_dts::StaticEcho {
public:
  void echo_scalars(dts::Scalars&) override {}
  void echo_strings(dts::Strings&) override {}
  void echo_unions(dts::Unions&) override {}
  void echo_collections(dts::Collections&) override {}
  void echo_values(dts::Values&) override {}
  void echo_node(dts::Node*&) override {}
  void echo_g56(dts::G56_S1&) override {}
  void echo_g87(dts::G87_U1&) override {}
  void echo_wide_label_unions(dts::WideLabelUnions&) override {}
  void echo_g164(dts::G164_U1&) override {}
};

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    if (argc < 2) {
      std::cerr << "usage: omni_static_echo IORFILE [LIFETIME_S] [-ORB options]\n";
      return 2;
    }
    int lifetime = argc > 2 ? std::atoi(argv[2]) : 600;
    CORBA::ValueFactoryBase_var f = new dts::Node_init;
    orb->register_value_factory(dts::Node::_PD_repoId, f);

    diff_serve(orb, new StaticEchoImpl, argv[1], lifetime);
  } catch (CORBA::Exception& e) {
    std::cerr << "omni_static_echo: " << e._name() << "\n";
    return 1;
  }
  return 0;
}
