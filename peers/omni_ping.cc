// omni_ping.cc -- the smallest omniORB client: N null twoway calls (bench.idl ping), for
// instruction counting under callgrind beside Corbina's `ping` example.
//
// usage: omni_ping IORFILE [N] [-ORB options]

#include <omniORB4/CORBA.h>
#include "bench.hh"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s IORFILE [N]\n", argv[0]);
    return 2;
  }
  std::ifstream f(argv[1]);
  std::string ior;
  std::getline(f, ior);
  long n = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 10000;
  CORBA::Object_var obj = orb->string_to_object(ior.c_str());
  Bench_var b = Bench::_narrow(obj);
  for (long i = 0; i < n; ++i) b->ping();
  std::printf("%ld calls\n", n);
  orb->destroy();
  return 0;
}
