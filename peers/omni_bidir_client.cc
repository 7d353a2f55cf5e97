// omni_bidir_client.cc -- omniORB client of bidir.idl that hosts a Callback
// reachable only through bidirectional GIOP.
//
// usage: omni_bidir_client --ior FILE [options] [-ORB... options]
//   --mode M           check | serve | drive | bench                  [check]
//   --count N          bench: calls timed per point                   [20000]
//   --label L          bench: ordinary | bidirectional (what the -ORB options
//                      made this client's connection)                 [bidirectional]
//   --n N              callbacks per step                             [5]
//   --publish P        refused | real | HOST:PORT                     [refused]
//                      the endpoint published in the Callback's IOR:
//                      refused = 127.0.0.1:PORT with PORT bound by this
//                      process and never listened on, so connecting to it
//                      fails at once (ECONNREFUSED); real = omniORB's own
//                      endpoint (no -ORBendPointPublish added)
//   --poa-policy V     both | normal: the Callback POA's BidirectionalPolicy [both]
//   --later-delay MS   delay_ms passed to call_back_later              [100]
//   --wait-s S         check: how long to wait for oneways and later callbacks [10]
//   --seconds S        serve: give up after S seconds                  [60]
//   --expect-notify K  serve: exit 0 once K notify() calls have arrived [0]
//   --expect-ticks T   serve: ... and T tick() oneways                  [0]
//
// check: ping; call_back(cb, N) == N(N+1); register_cb; notify_registered(N)
// == N(N+1); tick_registered(N) then N ticks arrive; N tick() oneways then
// ticks_seen() grows by N; call_back_later(cb, N, MS) then N notifies arrive
// while ping() keeps being called.  Prints one JSON line; exit 0 only if
// every step was right.  It checks any server of bidir.idl (omniORB's or
// Corbina's).
//
// serve: register_cb(cb), print {"mode":"serve","registered":true}, then wait
// for the server to call back on its own; prints one JSON line with what
// arrived and exits 0 once the expectations are met (1 on timeout).
//
// drive: notify_registered(N) and tick_registered(N) on a Callback some other
// client registered (this one registers nothing); exit 0 if the sum is
// N(N+1).  With a serve client, it makes a server call back over another
// client's bidirectional connection, or find that connection gone.
//
// bench: times --count ping() calls (after count/10 unmeasured), and when
// --label is bidirectional, call_back(cb, 1) calls (one callback over this
// connection each); prints one JSON record per point in corbina-ttcp's schema
// (experiment "bidir", impl "omniORB"), the suite's omniORB comparison.
//
// The -ORBendPointPublish for --publish goes before the command line's
// -ORB options (a later one wins).  omniORB offers bidirectional GIOP only
// with both of these (giopRope.cc:filterAndSortAddressList,
// giopBiDir.cc:setBiDirServiceContext):
//   -ORBofferBiDirectionalGIOP 1
//   -ORBclientTransportRule "* unix,ssl,tcp,bidir"
// and it dispatches callbacks arriving on that connection only to a POA with
// BidirectionalPolicy BOTH (GIOP_S.cc:ReceiveRequest, OBJ_ADAPTER otherwise).

#include <omniORB4/CORBA.h>
#include "bidir.hh"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<long> g_notifies{0};
std::atomic<long> g_bad_notifies{0};  // notify(n) with n outside 1..N
std::atomic<long> g_ticks{0};
long g_n = 5;

class CallbackImpl : public POA_BidirTest::Callback {
 public:
  CORBA::Long notify(CORBA::Long n) override {
    if (n < 1 || n > g_n) g_bad_notifies.fetch_add(1);
    g_notifies.fetch_add(1);
    return 2 * n;
  }
  void tick(CORBA::Long) override { g_ticks.fetch_add(1); }
};

std::string exception_text(const CORBA::Exception& ex) {
  std::ostringstream o;
  o << "CORBA::" << ex._name();
  if (const CORBA::SystemException* se = CORBA::SystemException::_downcast(&ex)) {
    o << " minor 0x" << std::hex << se->minor();
    o << (se->completed() == CORBA::COMPLETED_YES
              ? " COMPLETED_YES"
              : se->completed() == CORBA::COMPLETED_NO ? " COMPLETED_NO"
                                                       : " COMPLETED_MAYBE");
  }
  return o.str();
}

// JSON string literal (the texts here are ASCII).
std::string q(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

// Waits up to `limit` seconds for `done`, calling `between` (if any) meanwhile.
bool wait_for(const std::function<bool()>& done, double limit,
              const std::function<void()>& between = nullptr) {
  auto end = std::chrono::steady_clock::now() +
             std::chrono::milliseconds(static_cast<long>(limit * 1000));
  while (!done()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    if (between) between();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A TCP port on 127.0.0.1 that this process holds bound but never listens
// on: connecting to it is refused, so nothing but the client's own
// connection can carry a callback.  The socket stays open until exit.
int refused_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return -1;
  }
  return ntohs(a.sin_port);
}

struct Step {
  std::string name;
  bool ok;
  std::string detail;  // JSON value
};

// Runs one step, turning a CORBA exception into a failed step.
void run_step(std::vector<Step>& steps, const std::string& name,
              const std::function<std::pair<bool, std::string>()>& body) {
  try {
    auto r = body();
    steps.push_back({name, r.first, r.second});
  } catch (CORBA::Exception& ex) {
    steps.push_back({name, false, q(exception_text(ex))});
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "check", publish = "refused", poa_policy = "both", iorfile;
  long later_delay = 100, expect_notify = 0, expect_ticks = 0, count = 20000;
  std::string label = "bidirectional";
  double seconds = 60, wait_s = 10;

  // Our options first (ORB_init would leave them alone, but the publish
  // option has to be known before it).
  std::vector<char*> orb_args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", what);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ior") iorfile = val("--ior");
    else if (a == "--mode") mode = val("--mode");
    else if (a == "--count") count = std::strtol(val("--count"), nullptr, 10);
    else if (a == "--label") label = val("--label");
    else if (a == "--n") g_n = std::strtol(val("--n"), nullptr, 10);
    else if (a == "--publish") publish = val("--publish");
    else if (a == "--poa-policy") poa_policy = val("--poa-policy");
    else if (a == "--later-delay") later_delay = std::strtol(val("--later-delay"), nullptr, 10);
    else if (a == "--wait-s") wait_s = std::strtod(val("--wait-s"), nullptr);
    else if (a == "--seconds") seconds = std::strtod(val("--seconds"), nullptr);
    else if (a == "--expect-notify") expect_notify = std::strtol(val("--expect-notify"), nullptr, 10);
    else if (a == "--expect-ticks") expect_ticks = std::strtol(val("--expect-ticks"), nullptr, 10);
    else if (a.rfind("-ORB", 0) == 0) {
      orb_args.push_back(argv[i]);
      if (i + 1 < argc) orb_args.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (iorfile.empty() || (mode != "check" && mode != "serve" && mode != "drive" && mode != "bench") ||
      count < 1 || (label != "ordinary" && label != "bidirectional") || g_n < 1 ||
      g_n > 46340 /* N(N+1) fits a long */ ||
      (poa_policy != "both" && poa_policy != "normal")) {
    std::fprintf(stderr,
                 "usage: %s --ior FILE [--mode check|serve|drive|bench] [--n N] "
                 "[--count N] [--label ordinary|bidirectional] "
                 "[--publish refused|real|HOST:PORT] [--poa-policy both|normal] "
                 "[--later-delay MS] [--wait-s S] [--seconds S] [--expect-notify K] "
                 "[--expect-ticks T] [-ORB options]\n",
                 argv[0]);
    return 2;
  }

  std::string publish_ep;
  if (publish == "refused") {
    int port = refused_port();
    if (port < 0) {
      std::perror("binding the refused port");
      return 1;
    }
    publish_ep = "giop:tcp:127.0.0.1:" + std::to_string(port);
  } else if (publish != "real") {
    publish_ep = "giop:tcp:" + publish;
  }
  std::vector<char*> all{orb_args[0]};
  std::string opt_publish = "-ORBendPointPublish";
  if (!publish_ep.empty()) {
    all.push_back(&opt_publish[0]);
    all.push_back(&publish_ep[0]);
  }
  all.insert(all.end(), orb_args.begin() + 1, orb_args.end());
  int orb_argc = static_cast<int>(all.size());
  all.push_back(nullptr);

  std::string ior;
  {
    std::ifstream f(iorfile);
    std::getline(f, ior);
    if (ior.empty()) {
      std::fprintf(stderr, "no IOR in %s\n", iorfile.c_str());
      return 2;
    }
  }

  std::vector<Step> steps;
  int rc = 1;
  try {
    char** av = all.data();
    CORBA::ORB_var orb = CORBA::ORB_init(orb_argc, av);

    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
    PortableServer::POAManager_var pman = root->the_POAManager();
    CORBA::PolicyList pl;
    pl.length(1);
    CORBA::Any a;
    a <<= (poa_policy == "both" ? BiDirPolicy::BOTH : BiDirPolicy::NORMAL);
    pl[0] = orb->create_policy(BiDirPolicy::BIDIRECTIONAL_POLICY_TYPE, a);
    PortableServer::POA_var poa = root->create_POA("bidir", pman, pl);
    CallbackImpl* servant = new CallbackImpl;
    PortableServer::ObjectId_var oid = poa->activate_object(servant);
    servant->_remove_ref();
    CORBA::Object_var cbobj = poa->id_to_reference(oid);
    BidirTest::Callback_var cb = BidirTest::Callback::_narrow(cbobj);
    // The giopServer must be active before a bidirectional connection is
    // opened (giopServer::addBiDirStrand; TRANSIENT otherwise).
    pman->activate();

    CORBA::Object_var robj = orb->string_to_object(ior.c_str());
    BidirTest::Registrar_var reg = BidirTest::Registrar::_narrow(robj);
    const long n = g_n, want = n * (n + 1);
    const std::string published = publish_ep.empty() ? "real" : publish_ep;

    if (mode == "check") {
      run_step(steps, "ping", [&] {
        CORBA::Long r = reg->ping();
        return std::make_pair(r == 1, std::to_string(r));
      });
      run_step(steps, "call_back", [&] {
        CORBA::Long r = reg->call_back(cb, n);
        return std::make_pair(r == want && g_notifies.load() == n, std::to_string(r));
      });
      run_step(steps, "register_cb", [&] {
        reg->register_cb(cb);
        return std::make_pair(true, std::string("null"));
      });
      run_step(steps, "notify_registered", [&] {
        CORBA::Long r = reg->notify_registered(n);
        return std::make_pair(r == want, std::to_string(r));
      });
      run_step(steps, "tick_registered", [&] {
        long before = g_ticks.load();
        reg->tick_registered(n);
        bool ok = wait_for([&] { return g_ticks.load() - before >= n; }, wait_s);
        return std::make_pair(ok && g_ticks.load() - before == n,
                              std::to_string(g_ticks.load() - before));
      });
      run_step(steps, "tick", [&] {
        long before = reg->ticks_seen();
        for (long i = 1; i <= n; ++i) reg->tick(i);
        long seen = before;
        bool ok = wait_for([&] { return (seen = reg->ticks_seen()) - before >= n; }, wait_s);
        return std::make_pair(ok, std::to_string(seen - before));
      });
      run_step(steps, "call_back_later", [&] {
        long before = g_notifies.load();
        reg->call_back_later(cb, n, later_delay);
        long pings = 0;
        bool ok = wait_for([&] { return g_notifies.load() - before >= n; }, wait_s, [&] {
          if (reg->ping() == 1) ++pings;
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // no extras
        long got = g_notifies.load() - before;
        return std::make_pair(ok && got == n && pings > 0,
                              "{\"notifies\":" + std::to_string(got) +
                                  ",\"pings_meanwhile\":" + std::to_string(pings) + "}");
      });
      bool all_ok = g_bad_notifies.load() == 0;
      for (const Step& s : steps) all_ok = all_ok && s.ok;
      std::string line = "{\"mode\":\"check\",\"n\":" + std::to_string(n) +
                         ",\"published\":" + q(published) + ",\"ok\":" +
                         (all_ok ? "true" : "false") + ",\"steps\":{";
      for (size_t i = 0; i < steps.size(); ++i) {
        if (i) line += ",";
        line += q(steps[i].name) + ":{\"ok\":" + (steps[i].ok ? "true" : "false") +
                ",\"result\":" + steps[i].detail + "}";
      }
      line += "},\"notifies\":" + std::to_string(g_notifies.load()) +
              ",\"bad_notifies\":" + std::to_string(g_bad_notifies.load()) +
              ",\"ticks\":" + std::to_string(g_ticks.load()) + "}";
      std::printf("%s\n", line.c_str());
      rc = all_ok ? 0 : 1;
    } else if (mode == "bench") {
      // Microseconds per call of `call` (count/10 unmeasured first); the median of the
      // samples, and the rest of corbina-ttcp's latency fields.
      auto point = [&](const char* op, const std::function<CORBA::Long()>& call,
                       CORBA::Long want) {
        for (long i = 0; i < count / 10; ++i) {
          if (call() != want) throw CORBA::BAD_PARAM();
        }
        std::vector<double> us(count);
        for (long i = 0; i < count; ++i) {
          auto t = std::chrono::steady_clock::now();
          CORBA::Long r = call();
          us[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t)
                      .count();
          if (r != want) throw CORBA::BAD_PARAM();
        }
        std::sort(us.begin(), us.end());
        double sum = 0;
        for (double v : us) sum += v;
        size_t n = us.size();
        double median = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
        size_t r99 = static_cast<size_t>(std::ceil(0.99 * n));
        std::printf(
            "{\"experiment\":\"bidir\",\"impl\":\"omniORB\",\"transport\":\"tcp\","
            "\"invocation\":\"static\",\"mode\":%s,\"op\":%s,\"n\":%zu,\"median_us\":%.3f,"
            "\"p99_us\":%.3f,\"mean_us\":%.3f,\"min_us\":%.3f}\n",
            q(label).c_str(), q(op).c_str(), n, median, us[r99 ? r99 - 1 : 0], sum / n, us[0]);
        std::fflush(stdout);
      };
      if (label == "bidirectional") {
        // A callback first: the connection is bidirectional from here on.
        if (reg->call_back(cb, 1) != 2) throw CORBA::BAD_PARAM();
      }
      point("ping", [&] { return reg->ping(); }, 1);
      if (label == "bidirectional") {
        g_n = 1;
        point("call_back", [&] { return reg->call_back(cb, 1); }, 2);
      }
      rc = 0;
    } else if (mode == "drive") {
      run_step(steps, "notify_registered", [&] {
        CORBA::Long r = reg->notify_registered(n);
        return std::make_pair(r == want, std::to_string(r));
      });
      run_step(steps, "tick_registered", [&] {
        reg->tick_registered(n);
        return std::make_pair(true, std::string("null"));
      });
      bool all_ok = steps[0].ok && steps[1].ok;
      std::string line = "{\"mode\":\"drive\",\"n\":" + std::to_string(n) + ",\"ok\":" +
                         (all_ok ? "true" : "false");
      for (const Step& s : steps)
        line += "," + q(s.name) + ":{\"ok\":" + (s.ok ? "true" : "false") +
                ",\"result\":" + s.detail + "}";
      std::printf("%s}\n", line.c_str());
      rc = all_ok ? 0 : 1;
    } else {
      reg->register_cb(cb);
      std::printf("{\"mode\":\"serve\",\"registered\":true,\"published\":%s}\n",
                  q(published).c_str());
      std::fflush(stdout);
      // Without expectations it serves for the whole --seconds.
      const bool expecting = expect_notify > 0 || expect_ticks > 0;
      auto met = [&] {
        return g_notifies.load() >= expect_notify && g_ticks.load() >= expect_ticks;
      };
      wait_for([&] { return expecting && met(); }, seconds);
      bool ok = met() && g_bad_notifies.load() == 0;
      std::printf("{\"mode\":\"serve\",\"ok\":%s,\"notifies\":%ld,\"bad_notifies\":%ld,"
                  "\"ticks\":%ld}\n",
                  ok ? "true" : "false", g_notifies.load(), g_bad_notifies.load(),
                  g_ticks.load());
      rc = ok ? 0 : 1;
    }
    std::fflush(stdout);
    orb->destroy();
  } catch (CORBA::Exception& ex) {
    std::printf("{\"mode\":%s,\"ok\":false,\"error\":%s}\n", q(mode).c_str(),
                q(exception_text(ex)).c_str());
    return 1;
  }
  return rc;
}
