//! The wire trace as a user gets it: a server run with `-ORBtraceLevel 40` and a client
//! run with `CORBINA_LOG`, each its own process (this test binary again, running one of
//! the ignored roles below), print their requests and hex dumps of GIOP messages on
//! stderr.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use corbina::{Orb, Servant, ServerRequest, SystemException};

const TIMEOUT: Duration = Duration::from_secs(10);

struct Pinger;

impl Servant for Pinger {
    fn primary_interface(&self) -> &'static str {
        "IDL:Test/Pinger:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Test/Pinger:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        req.reply(|_| Ok(()))
    }
}

/// Role: a server taking its options from the command line; prints its IOR, serves until
/// its stdin closes.
#[test]
#[ignore = "a process started by trace_shows_requests_and_hex_dumps"]
fn role_server() {
    let args = std::env::var("WIRE_TRACE_ARGS").expect("started by the test");
    let (orb, _) = Orb::init(args.split(' ').map(String::from)).unwrap();
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(Pinger);
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    println!("{}", orb.object_to_string(&obj).unwrap());
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    orb.destroy();
}

/// Role: a client calling `ping` on the IOR it is given (options from the environment).
#[test]
#[ignore = "a process started by trace_shows_requests_and_hex_dumps"]
fn role_client() {
    let ior = std::env::var("WIRE_TRACE_IOR").expect("started by the test");
    let (orb, _) = Orb::init(vec!["client".to_owned()]).unwrap();
    let obj = orb.string_to_object(&ior).unwrap();
    obj.invoke("ping", |_| Ok(()), |_| Ok(()), corbina::no_user)
        .map_err(|e: SystemException| e)
        .unwrap();
    orb.destroy();
}

fn role(name: &str) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove("CORBINA_LOG")
    .env_remove("RUST_LOG");
    c
}

#[test]
fn trace_shows_requests_and_hex_dumps() {
    let mut server = role("role_server")
        .env(
            "WIRE_TRACE_ARGS",
            "server -ORBtraceLevel 40 -ORBPreferUnix 0",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest writes "test role_server ... " first.
            if let Some(at) = line.find("IOR:") {
                let _ = tx.send(line[at..].trim().to_owned());
            }
        }
    });
    let Ok(ior) = rx.recv_timeout(TIMEOUT) else {
        let _ = server.kill();
        let mut err = String::new();
        let _ = server.stderr.take().unwrap().read_to_string(&mut err);
        panic!("the server printed no IOR: {err}");
    };

    let client = role("role_client")
        .env("WIRE_TRACE_IOR", &ior)
        .env("CORBINA_LOG", "corbina::request=info,corbina::wire=trace")
        .env("CORBINA_PREFERUNIX", "0")
        .output()
        .unwrap();
    let client_err = String::from_utf8_lossy(&client.stderr);
    assert!(client.status.success(), "client failed: {client_err}");

    drop(server.stdin.take());
    let mut server_err = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut server_err)
        .unwrap();
    assert!(server.wait().unwrap().success(), "server: {server_err}");

    for (who, log, span) in [
        ("client", &*client_err, "corbina.client"),
        ("server", &*server_err, "corbina.server"),
    ] {
        let request = log
            .lines()
            .find(|l| l.contains(span) && l.contains("request ended"))
            .unwrap_or_else(|| panic!("{who}: no request line in\n{log}"));
        assert!(request.contains("operation=\"ping\""), "{who}: {request}");
        assert!(
            request.contains("outcome=\"SUCCESSFUL\""),
            "{who}: {request}"
        );
        // The Request and the Reply, as hex: offset, hex pairs, ASCII.
        assert!(
            log.contains("sent "),
            "{who}: no dump of what it sent\n{log}"
        );
        assert!(
            log.contains("received "),
            "{who}: no dump of what it got\n{log}"
        );
        assert!(
            log.lines().any(|l| l.starts_with("0000  4749 4f50 01")
                && l.ends_with(|c: char| c.is_ascii_graphic() || c == ' ')
                && l.contains("GIOP")),
            "{who}: no GIOP header dump\n{log}"
        );
        // Each dump is headed by its message's header, decoded.
        let (sent, got) = match who {
            "client" => ("Request", "Reply"),
            _ => ("Reply", "Request"),
        };
        for (dir, kind) in [("sent ", sent), ("received ", got)] {
            assert!(
                log.lines().any(|l| l.contains(dir)
                    && l.contains(&format!(": GIOP 1.2 {kind}, "))
                    && l.contains("-byte body")),
                "{who}: no decoded {kind} header\n{log}"
            );
        }
    }
    // Level 40 includes connections (level 10).
    assert!(server_err.contains("connection accepted"), "{server_err}");
}
