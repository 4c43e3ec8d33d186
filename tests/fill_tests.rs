//! Remote fill files (netperf's `-F ,file`): our netserver reads them only
//! from the directory its operator names with `-F DIR`, only by plain file
//! name, never through a link out of it.

mod common;
use common::*;

#[test]
fn remote_fill_files_come_only_from_the_operators_directory() {
    let dir = std::env::temp_dir().join(format!("netperf-ng-fill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pattern"), b"0123456789abcdef".repeat(1024)).unwrap();
    let outside = std::env::temp_dir().join(format!("netperf-ng-secret-{}", std::process::id()));
    std::fs::write(&outside, b"secret").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("escape")).unwrap();

    let closed = Server::start("127.0.0.1");
    let out = netperf(&closed, &["-t", "TCP_MAERTS", "-l", "1", "-F", ",pattern"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("remote error 1"),
        "{}",
        text(&out.stderr)
    );

    let open = Server::start_with("127.0.0.1", &["-F", dir.to_str().unwrap()]);
    let out = netperf(
        &open,
        &["-t", "TCP_MAERTS", "-l", "1", "-P", "0", "-F", ",pattern"],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        numbers(first_line(&text(&out.stdout)))
            .last()
            .copied()
            .unwrap_or(0.0)
            > 0.0
    );
    for bad in [",../secret", ",escape", ",missing"] {
        let out = netperf(&open, &["-t", "TCP_MAERTS", "-l", "1", "-F", bad]);
        assert!(!out.status.success(), "{bad} was served");
    }
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&outside).ok();
}
