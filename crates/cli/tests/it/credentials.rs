//! `snowctl credentials check|encode` end to end: verdicts, exit codes, positions, encodings,
//! and that no key ever appears in any output.

use assert_cmd::Command;
use base64::Engine as _;
use rcgen::{CertificateParams, DnType, KeyPair, PKCS_ECDSA_P256_SHA256};
use std::path::{Path, PathBuf};
use time::{Duration, OffsetDateTime};

const AK: &str = "AKIAIOSFODNN7EXAMPLE";
const SK: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const AK2: &str = "AKIASNOWDEVICE000002";
const SK2: &str = "sEcReT/0002+wJalrXUtnFEMIK7MDENGbPxRfiCY";

fn profile(ip: &str, ak: &str, sk: &str) -> String {
    format!("[{ip}]\naws_access_key_id = {ak}\naws_secret_access_key = {sk}\nregion = snow\n")
}

fn good_credentials() -> String {
    format!(
        "{}\n{}",
        profile("192.168.1.10", AK, SK),
        profile("192.168.1.11", AK2, SK2)
    )
}

/// A device certificate (IP SAN), valid from `from` to `to` days from now.
fn cert(ip: &str, from: i64, to: i64) -> String {
    let mut params = CertificateParams::new(vec![ip.to_owned()]).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, ip);
    let now = OffsetDateTime::now_utc();
    params.not_before = now + Duration::days(from);
    params.not_after = now + Duration::days(to);
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
    params.self_signed(&key).unwrap().pem()
}

fn good_bundle() -> String {
    format!(
        "{}{}",
        cert("192.168.1.10", -10, 365),
        cert("192.168.1.11", -10, 365)
    )
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        Files {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn write(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        path
    }
}

fn snowctl() -> Command {
    let mut cmd = Command::cargo_bin("snowctl").unwrap();
    cmd.env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env("NO_COLOR", "1");
    cmd
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], creds: &Path, ca: &Path) -> Run {
    let mut cmd = snowctl();
    cmd.args(args)
        .arg("--credentials")
        .arg(creds)
        .arg("--ca-bundle")
        .arg(ca);
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn check(creds: &str, bundle: &str) -> Run {
    let files = Files::new();
    let c = files.write("credentials.ini", creds);
    let b = files.write("ca.pem", bundle);
    run(&["credentials", "check"], &c, &b)
}

#[test]
fn good_files_pass_with_a_device_table() {
    let r = check(&good_credentials(), &good_bundle());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("DEVICE"), "{}", r.stdout);
    for ip in ["192.168.1.10", "192.168.1.11"] {
        let row = r.stdout.lines().find(|l| l.starts_with(ip)).expect("row");
        assert!(
            row.contains(" ok ") && row.contains("snow") && row.ends_with("yes"),
            "{row}"
        );
    }
    assert!(r.stdout.contains("no findings"));
}

#[test]
fn tolerance_cases_pass() {
    let tolerant = format!(
        "\u{feff}# Snow devices\r\n; second comment\r\n\r\n[192.168.1.10] \r\n  aws_access_key_id   =   {AK}  \r\naws_secret_access_key={SK}\r\nregion = snow\r\noutput = json\r\n\r\n[default]\r\nregion = us-east-1\r\n\r\n  [ 192.168.1.11 ]\r\n{}",
        profile("x", AK2, SK2)
            .split_once('\n')
            .unwrap()
            .1
            .replace('\n', "\r\n")
    );
    let r = check(&tolerant, &good_bundle());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("credentials.non-device-profile"));
    assert!(r.stdout.contains("valid, 1 warning(s)"), "{}", r.stdout);
}

#[test]
fn broken_credentials_give_errors_with_positions() {
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "duplicate",
            format!("{}{}", profile("192.168.1.10", AK, SK), good_credentials()),
            "credentials.duplicate-device",
            "credentials.ini:5:1",
        ),
        (
            "missing equals",
            good_credentials().replacen("aws_secret_access_key =", "aws_secret_access_key", 1),
            "credentials.missing-equals",
            "credentials.ini:3:1",
        ),
        (
            "missing secret",
            good_credentials().replacen(&format!("aws_secret_access_key = {SK}\n"), "", 1),
            "credentials.missing-secret-key",
            "credentials.ini:1:1",
        ),
        (
            "blank value",
            good_credentials().replacen(&format!("= {SK}"), "=    ", 1),
            "credentials.empty-value",
            "credentials.ini:3:24",
        ),
        (
            "unclosed header",
            good_credentials().replacen("[192.168.1.11]", "[192.168.1.11", 1),
            "credentials.section-unclosed",
            "credentials.ini:6:1",
        ),
        (
            "empty",
            String::new(),
            "credentials.no-device-profile",
            "credentials.ini:1:1",
        ),
        (
            "no device",
            "[default]\naws_access_key_id = x\n".into(),
            "credentials.no-device-profile",
            "credentials.ini:1:1",
        ),
    ];
    for (name, creds, check_id, position) in cases {
        let r = check(&creds, &good_bundle());
        assert_eq!(r.code, 1, "{name}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.contains(check_id), "{name}: {}", r.stdout);
        assert!(r.stdout.contains(position), "{name}: {}", r.stdout);
        assert!(r.stdout.contains("hint:"), "{name}");
    }
}

#[test]
fn binary_and_huge_files_are_findings() {
    let r = check("\u{0}\u{1}ELF", &good_bundle());
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("credentials.not-text"));
    let huge = good_credentials().repeat(20_000);
    let r = check(&huge, &good_bundle());
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("credentials.too-large"));
    let r = check(&good_credentials(), "\u{0}\u{0}");
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("ca-bundle.not-text"));
}

#[test]
fn expired_uncovered_and_broken_bundles() {
    let expired = format!(
        "{}{}",
        cert("192.168.1.10", -10, 365),
        cert("192.168.1.11", -400, -1)
    );
    let r = check(&good_credentials(), &expired);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("ca-bundle.expired"));
    assert!(r.stdout.contains("no (not valid now)"));

    let other = format!(
        "{}{}",
        cert("192.168.1.10", -10, 365),
        cert("10.9.9.9", -10, 365)
    );
    let r = check(&good_credentials(), &other);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("ca-bundle.device-not-covered"));
    assert!(r.stdout.contains("ca-bundle.unused-certificate"));

    let expiring = format!(
        "{}{}",
        cert("192.168.1.10", -10, 365),
        cert("192.168.1.11", -300, 7)
    );
    let r = check(&good_credentials(), &expiring);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("ca-bundle.expiring"));

    let good = good_bundle();
    let cut: String = good.lines().take(5).map(|l| format!("{l}\n")).collect();
    let r = check(&good_credentials(), &cut);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("ca-bundle.missing-end"));
    assert!(r.stdout.contains("ca.pem:1:1"));

    let junk = good.replacen(
        "-----END CERTIFICATE-----\n",
        "-----END CERTIFICATE-----\nnot pem\n",
        1,
    );
    let r = check(&good_credentials(), &junk);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("ca-bundle.text-outside-blocks"));
}

#[test]
fn json_report() {
    let files = Files::new();
    let c = files.write("credentials.ini", good_credentials());
    let b = files.write("ca.pem", cert("192.168.1.10", -10, 365));
    let r = run(&["credentials", "check", "-o", "json"], &c, &b);
    assert_eq!(r.code, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["devices"][0]["device"], "192.168.1.10");
    assert_eq!(v["devices"][0]["covered"], true);
    assert_eq!(v["devices"][0]["accessKeyId"], true);
    super::assert_camel_case(&v, &[]);
    assert_eq!(v["devices"][0]["region"], "snow");
    assert_eq!(v["devices"][1]["covered"], false);
    assert_eq!(v["certificates"][0]["covers"][0], "192.168.1.10");
    let f = &v["findings"][0];
    assert_eq!(f["check"], "ca-bundle.device-not-covered");
    assert_eq!(f["device"], "192.168.1.11");
    assert_eq!(f["line"], 6);
}

#[test]
fn missing_files_and_usage_are_exit_2() {
    let files = Files::new();
    let c = files.write("credentials.ini", good_credentials());
    let missing = files.dir.path().join("nope.pem");
    let r = run(&["credentials", "check"], &c, &missing);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("nope.pem: the file does not exist"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("hint:"));
    let r = run(&["credentials", "check", "-o", "json"], &c, &missing);
    assert_eq!(r.code, 2);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["findings"][0]["check"], "ca-bundle.unreadable");
    let r = run(&["credentials", "encode"], files.dir.path(), &missing);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    // Neither flag nor env var.
    let out = snowctl().args(["credentials", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn env_vars_give_the_defaults() {
    let files = Files::new();
    let c = files.write("credentials.ini", good_credentials());
    let b = files.write("ca.pem", good_bundle());
    let out = snowctl()
        .args(["credentials", "check"])
        .env("EKSA_AWS_CREDENTIALS_FILE", &c)
        .env("EKSA_AWS_CA_BUNDLES_FILE", &b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("192.168.1.11"));
}

#[cfg(unix)]
#[test]
fn group_readable_credentials_warn() {
    use std::os::unix::fs::PermissionsExt;
    let files = Files::new();
    let c = files.write("credentials.ini", good_credentials());
    std::fs::set_permissions(&c, std::fs::Permissions::from_mode(0o644)).unwrap();
    let b = files.write("ca.pem", good_bundle());
    let r = run(&["credentials", "check"], &c, &b);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("credentials.file-permissions"));
    assert!(r.stdout.contains("chmod 600"));
}

#[test]
fn encode_prints_exports_that_decode_to_the_files() {
    let files = Files::new();
    let creds = good_credentials().replace('\n', "\r\n");
    let bundle = good_bundle();
    let c = files.write("credentials.ini", &creds);
    let b = files.write("ca.pem", &bundle);
    let r = run(&["credentials", "encode"], &c, &b);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    let decode = |line: &str, var: &str| {
        let value = line.strip_prefix(&format!("export {var}=")).expect(var);
        base64::engine::general_purpose::STANDARD
            .decode(value)
            .unwrap()
    };
    assert_eq!(
        decode(lines[0], "AWS_B64ENCODED_CREDENTIALS"),
        creds.as_bytes()
    );
    assert_eq!(
        decode(lines[1], "AWS_B64ENCODED_CA_BUNDLES"),
        bundle.as_bytes()
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn encode_refuses_files_with_errors() {
    let r = {
        let files = Files::new();
        let c = files.write(
            "credentials.ini",
            format!("{}{}", good_credentials(), profile("192.168.1.10", AK, SK)),
        );
        let b = files.write("ca.pem", good_bundle());
        run(&["credentials", "encode"], &c, &b)
    };
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("credentials.duplicate-device"));
    assert!(r.stderr.contains("not encoding"));
}

/// Every command that reads the credentials file, on good and broken inputs, with and without
/// `-v`: neither an access key nor a secret key appears in clear text in stdout or stderr.
/// A named test file.
type Named = (&'static str, String);

/// Good and broken credentials files, and bundles, that hold the test keys.
fn leak_cases() -> (Vec<Named>, [Named; 3]) {
    let good = good_credentials();
    let inputs: Vec<Named> = vec![
        ("good", good.clone()),
        (
            "duplicate",
            format!("{good}{}", profile("192.168.1.10", AK, SK)),
        ),
        (
            "missing equals",
            good.replacen("aws_secret_access_key =", "aws_secret_access_key", 1),
        ),
        (
            "missing secret",
            good.replacen(&format!("aws_secret_access_key = {SK}\n"), "", 1),
        ),
        (
            "missing access key",
            good.replacen(&format!("aws_access_key_id = {AK}\n"), "", 1),
        ),
        ("key as a line", format!("{good}{SK}\n{AK}\n")),
        ("key as a key", format!("{good}{AK} = {SK}\n")),
        ("key in a header", format!("{good}[{AK}]\n[{SK}\n")),
        ("key in a comment", format!("# old: {SK}\n{good}")),
        (
            "key as region",
            good.replacen("region = snow", &format!("region = {SK}"), 1),
        ),
        (
            "keys before any header",
            format!("aws_access_key_id = {AK}\naws_secret_access_key = {SK}\n{good}"),
        ),
        (
            "duplicate keys",
            good.replacen("region = snow", &format!("aws_secret_access_key = {SK}"), 1),
        ),
        (
            "unclosed header",
            good.replacen("[192.168.1.11]", "[192.168.1.11", 1),
        ),
        ("binary tail", format!("{good}\u{0}{SK}")),
        ("crlf", good.replace('\n', "\r\n")),
    ];
    let bundles = [
        ("good bundle", good_bundle()),
        ("expired bundle", cert("192.168.1.10", -400, -1)),
        ("junk bundle", format!("{SK}\n{}", good_bundle())),
    ];
    (inputs, bundles)
}

/// The test keys as they must never appear: in clear text and base64-encoded (the encoding a
/// Secret or a clusterctl variable would carry them in).
fn secret_forms() -> Vec<String> {
    [AK, SK, AK2, SK2]
        .iter()
        .flat_map(|key| {
            [
                (*key).to_owned(),
                base64::engine::general_purpose::STANDARD.encode(key),
            ]
        })
        .collect()
}

#[test]
fn no_secret_ever_appears_in_any_output() {
    let (inputs, bundles) = leak_cases();
    let secrets = secret_forms();
    let commands: [&[&str]; 8] = [
        &["credentials", "check"],
        &["credentials", "check", "-v"],
        &["-vv", "credentials", "check"],
        &["credentials", "check", "-o", "json"],
        &["credentials", "check", "-o", "json", "-v"],
        &["credentials", "encode"],
        &["credentials", "encode", "-v"],
        &["-vv", "credentials", "encode"],
    ];
    let files = Files::new();
    let mut runs = 0;
    // The two files swapped, and the credentials file given as both.
    for (name, creds) in &inputs {
        let c = files.write("credentials.ini", creds);
        let b = files.write("ca.pem", good_bundle());
        for args in commands {
            for (first, second) in [(&b, &c), (&c, &c)] {
                let r = run(args, first, second);
                runs += 1;
                for secret in &secrets {
                    assert!(
                        !r.stdout.contains(secret.as_str()) && !r.stderr.contains(secret.as_str()),
                        "{name} (swapped) / {args:?} leaked a key:\n{}\n{}",
                        r.stdout,
                        r.stderr
                    );
                }
            }
        }
    }
    for (bundle_name, bundle) in &bundles {
        let b = files.write("ca.pem", bundle);
        for (name, creds) in &inputs {
            let c = files.write("credentials.ini", creds);
            for args in commands {
                let r = run(args, &c, &b);
                runs += 1;
                for secret in &secrets {
                    assert!(
                        !r.stdout.contains(secret.as_str()) && !r.stderr.contains(secret.as_str()),
                        "{name} / {bundle_name} / {args:?} leaked a key:\n{}\n{}",
                        r.stdout,
                        r.stderr
                    );
                }
                assert!(r.code == 0 || r.code == 1, "{name} {args:?}: {}", r.stderr);
            }
        }
    }
    assert_eq!(runs, 15 * 8 * 2 + 3 * 15 * 8);
}

/// `snowctl render` reads the credentials file too (for the identity Secret): on every good and
/// broken input, with and without `-v`, no key appears in clear text. (The Secret's data is the
/// base64 of the file, which is what it is for.)
#[test]
fn render_never_shows_a_key() {
    let files = Files::new();
    let spec = snowctl()
        .args([
            "generate",
            "clusterconfig",
            "edge",
            "--provider",
            "snow",
            "--devices",
            "192.168.1.10,192.168.1.11",
            "--endpoint",
            "192.168.1.100",
        ])
        .output()
        .unwrap();
    let spec = files.write("cluster.yaml", spec.stdout);
    let spec = spec.to_str().unwrap();
    let (inputs, bundles) = leak_cases();
    let secrets = secret_forms();
    let commands: [&[&str]; 3] = [
        &["render", "-f", spec],
        &["-v", "render", "-f", spec],
        &["create", "cluster", "--dry-run", "-f", spec],
    ];
    for (bundle_name, bundle) in &bundles {
        let b = files.write("ca.pem", bundle);
        for (name, creds) in &inputs {
            let c = files.write("credentials.ini", creds);
            for args in commands {
                let r = run(args, &c, &b);
                for secret in &secrets {
                    assert!(
                        !r.stdout.contains(secret.as_str()) && !r.stderr.contains(secret.as_str()),
                        "{name} / {bundle_name} / {args:?} leaked a key:\n{}\n{}",
                        r.stdout,
                        r.stderr
                    );
                }
                assert!(r.code == 0 || r.code == 1, "{name} {args:?}: {}", r.stderr);
            }
        }
    }
}
