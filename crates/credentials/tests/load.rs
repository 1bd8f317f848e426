//! Reading the files from disk: missing, unreadable, empty, huge, binary; permissions.

mod common;

use snow_credentials::{InputError, has_check, load_ca_bundle, load_credentials};
use std::io::Write;

#[test]
fn missing_file_and_directory_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.ini");
    let err = load_credentials(&missing).unwrap_err();
    assert!(matches!(err, InputError::NotFound { .. }));
    assert!(err.to_string().contains("does not exist"));
    assert!(err.to_finding("credentials").hint.is_some());
    assert!(matches!(
        load_ca_bundle(dir.path()).unwrap_err(),
        InputError::IsDirectory { .. }
    ));
}

#[cfg(unix)]
#[test]
fn permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials");
    std::fs::write(&path, common::credentials(&["1.2.3.4"])).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (_, findings) = load_credentials(&path).unwrap();
    assert!(has_check(&findings, "credentials.file-permissions"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (file, findings) = load_credentials(&path).unwrap();
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(file.devices().len(), 1);
}

#[test]
fn empty_huge_and_binary_files_are_findings() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "").unwrap();
    let (_, findings) = load_credentials(&empty).unwrap();
    assert!(has_check(&findings, "credentials.no-device-profile"));
    let (_, findings) = load_ca_bundle(&empty).unwrap();
    assert!(has_check(&findings, "ca-bundle.no-certificate"));

    let huge = dir.path().join("huge");
    let mut f = std::fs::File::create(&huge).unwrap();
    let line = common::credentials(&["1.2.3.4"]);
    for _ in 0..(2 * 1024 * 1024 / line.len()) {
        f.write_all(line.as_bytes()).unwrap();
    }
    drop(f);
    let (file, findings) = load_credentials(&huge).unwrap();
    assert!(has_check(&findings, "credentials.too-large"));
    assert_eq!(findings.iter().filter(|f| f.is_error()).count(), 1);
    assert!(file.devices().is_empty());
    assert_eq!(findings[0].line, Some(1));

    let binary = dir.path().join("binary");
    std::fs::write(&binary, [0x7f, b'E', b'L', b'F', 0, 0, 1, 2]).unwrap();
    let (_, findings) = load_credentials(&binary).unwrap();
    assert!(has_check(&findings, "credentials.not-text"));
    let (_, findings) = load_ca_bundle(&binary).unwrap();
    assert!(has_check(&findings, "ca-bundle.not-text"));
}
