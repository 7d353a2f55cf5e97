// The differential harness's omniORB echo peers (omni_diff_echo, omni_static_echo): activate
// the servant in the root POA, write its IOR to IORFILE (through a rename, so the harness
// never reads half a file), exit by itself after LIFETIME_S, and run the ORB.
#ifndef DIFF_SERVE_H
#define DIFF_SERVE_H

#include <omniORB4/CORBA.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

inline void diff_serve(CORBA::ORB_ptr orb, PortableServer::Servant servant,
                       const char* ior_file, int lifetime) {
  CORBA::Object_var po = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var poa = PortableServer::POA::_narrow(po);
  PortableServer::ObjectId_var oid = poa->activate_object(servant);
  CORBA::Object_var ref = poa->id_to_reference(oid);
  poa->the_POAManager()->activate();
  CORBA::String_var ior = orb->object_to_string(ref);
  std::string tmp = std::string(ior_file) + ".tmp";
  {
    std::ofstream out(tmp);
    out << ior.in();
  }
  std::rename(tmp.c_str(), ior_file);
  std::thread([lifetime] {
    std::this_thread::sleep_for(std::chrono::seconds(lifetime));
    std::_Exit(0);
  }).detach();
  orb->run();
}

#endif
