//! A throwaway PKI made at test time (rcgen): a CA, and PEM key files holding a private key
//! and its certificate chain as omniORB's `-ORBsslKeyFile` reads them. No key is committed.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose,
};

/// The files of one PKI, in a directory of their own (removed on drop).
pub struct Pki {
    dir: PathBuf,
}

fn leaf(
    names: &[&str],
    common_name: &str,
    ca: &Certificate,
    ca_key: &KeyPair,
    expired: bool,
) -> String {
    let mut params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    if expired {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, ca, ca_key).unwrap();
    // omniORB's key file: the key, then the certificate chain.
    format!("{}{}{}", key.serialize_pem(), cert.pem(), ca.pem())
}

impl Pki {
    /// A CA and, signed by it, a server certificate for `localhost` and `127.0.0.1`, a
    /// client certificate, an expired server certificate and one for another name.
    pub fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("corbina-pki-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("Corbina test CA {name}"));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        let host = ["localhost", "127.0.0.1"];
        let files = [
            ("server.pem", leaf(&host, "server", &ca, &ca_key, false)),
            (
                "client.pem",
                leaf(&["client.example"], "client", &ca, &ca_key, false),
            ),
            ("expired.pem", leaf(&host, "expired", &ca, &ca_key, true)),
            (
                "misnamed.pem",
                leaf(&["other.example"], "misnamed", &ca, &ca_key, false),
            ),
        ];
        for (file, pem) in files {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        Pki { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    pub fn server_key(&self) -> PathBuf {
        self.dir.join("server.pem")
    }
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client.pem")
    }
    pub fn expired_server_key(&self) -> PathBuf {
        self.dir.join("expired.pem")
    }
    pub fn misnamed_server_key(&self) -> PathBuf {
        self.dir.join("misnamed.pem")
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
