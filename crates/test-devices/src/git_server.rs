//! Real git servers on loopback for the tests of a git client: bare repositories in a temporary
//! directory, served by git's own programs.
//!
//! - [`HttpsGit`]: smart HTTP over TLS. Each request runs git's `git http-backend` (found in
//!   `git --exec-path`) as a CGI program behind the TLS serving loop of [`crate::https`], with a
//!   certificate from a test CA. `GIT_HTTP_EXPORT_ALL` is set and every repository has
//!   `http.receivepack true`, so clone, fetch and push work. With [`HttpAuth::Token`] a request
//!   without the token, or with another one, is answered `401` with `WWW-Authenticate: Basic`, as
//!   a real git host answers (the token is accepted as `Authorization: Bearer TOKEN` or as the
//!   password of HTTP basic auth, any user name).
//! - [`SshGit`]: Debian's OpenSSH server (`/usr/sbin/sshd`) run as the current user on a free
//!   loopback port, with a host key made for it (`ssh-keygen -t ed25519`) and an
//!   `AuthorizedKeysFile` of its own naming one client key, forced through
//!   `command="git-shell -c \"$SSH_ORIGINAL_COMMAND\"",restrict`: the key can run only
//!   `git-upload-pack`, `git-receive-pack` and `git-upload-archive`, as a git-shell user can.
//!   Stopped on drop.
//!
//! Programs missing from the machine are an error naming `scripts/test-world`, which installs
//! them.

use crate::ca::TestCa;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where Debian's openssh-server puts the daemon.
pub const SSHD: &str = "/usr/sbin/sshd";

/// The largest request body the HTTPS front passes to `git http-backend` (a push of a test).
const MAX_REQUEST_BODY: usize = 256 << 20;

/// Why a git server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum GitServerError {
    /// A program the server needs is not installed.
    #[error("{program} is missing: run scripts/test-world (as root), which installs {package}")]
    Missing {
        /// The program looked for.
        program: String,
        /// The Debian package that carries it.
        package: &'static str,
    },
    /// A file or directory could not be made.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A program the setup runs failed.
    #[error("{0}")]
    Failed(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitServerError {
    let what = what.into();
    move |source| GitServerError::Io { what, source }
}

/// Runs `program args` to completion; its stdout, or an error with its stderr.
fn run(program: &Path, args: &[&str], package: &'static str) -> Result<String, GitServerError> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => GitServerError::Missing {
                program: program.display().to_string(),
                package,
            },
            _ => GitServerError::Io {
                what: format!("running {}", program.display()),
                source: e,
            },
        })?;
    if !output.status.success() {
        return Err(GitServerError::Failed(format!(
            "{} {}: {}: {}",
            program.display(),
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// git's own directory of programs (`git --exec-path`): `git-http-backend`, `git-shell`.
pub fn git_exec_path() -> Result<PathBuf, GitServerError> {
    run(Path::new("git"), &["--exec-path"], "git").map(PathBuf::from)
}

/// Bare repositories in a temporary directory (removed on drop), for the servers to serve.
#[derive(Debug)]
pub struct GitRepos {
    dir: tempfile::TempDir,
}

impl GitRepos {
    /// A new, empty directory of repositories.
    pub fn new() -> Result<GitRepos, GitServerError> {
        let dir = tempfile::Builder::new()
            .prefix("snowctl-git-")
            .tempdir()
            .map_err(io("creating the repositories' directory"))?;
        std::fs::create_dir(dir.path().join("repos")).map_err(io("creating repos/"))?;
        Ok(GitRepos { dir })
    }

    /// The directory the repositories are in (`GIT_PROJECT_ROOT`).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("repos")
    }

    /// Creates the empty bare repository `name` (such as `clusters.git`), whose default branch
    /// is `main`, that accepts pushes over HTTP; returns its path.
    pub fn create(&self, name: &str) -> Result<PathBuf, GitServerError> {
        let path = self.root().join(name);
        let shown = path.display().to_string();
        run(
            Path::new("git"),
            &["init", "--quiet", "--bare", "--initial-branch=main", &shown],
            "git",
        )?;
        run(
            Path::new("git"),
            &["-C", &shown, "config", "http.receivepack", "true"],
            "git",
        )?;
        Ok(path)
    }

    /// The path of repository `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root().join(name)
    }

    /// Another writer's commit: `file` set to `text` on `branch` of repository `name` (created
    /// when the repository is empty), through a clone of the repository's path and a push to it
    /// (no server involved). Returns the new commit id.
    pub fn commit(
        &self,
        name: &str,
        branch: &str,
        file: &str,
        text: &str,
    ) -> Result<String, GitServerError> {
        let work = self.scratch(&format!("writer-{}", next_id()))?;
        let work_s = work.display().to_string();
        let repo = self.path(name).display().to_string();
        let git = |args: &[&str]| {
            let mut all = vec![
                "-c",
                "user.name=Other Writer",
                "-c",
                "user.email=other@example.invalid",
            ];
            all.extend_from_slice(args);
            run(Path::new("git"), &all, "git")
        };
        git(&["clone", "--quiet", &repo, &work_s])?;
        git(&["-C", &work_s, "checkout", "--quiet", "-B", branch])?;
        if !git(&["-C", &work_s, "ls-remote", "--heads", "origin", branch])?.is_empty() {
            git(&[
                "-C",
                &work_s,
                "reset",
                "--quiet",
                "--hard",
                &format!("origin/{branch}"),
            ])?;
        }
        let path = work.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("creating the writer's directories"))?;
        }
        std::fs::write(&path, text).map_err(io(format!("writing {file}")))?;
        git(&["-C", &work_s, "add", "--", file])?;
        git(&[
            "-C",
            &work_s,
            "commit",
            "--quiet",
            "-m",
            &format!("other writer: {file}"),
        ])?;
        git(&[
            "-C",
            &work_s,
            "push",
            "--quiet",
            "origin",
            &format!("HEAD:refs/heads/{branch}"),
        ])?;
        let id = git(&["-C", &work_s, "rev-parse", "HEAD"])?;
        let _ = std::fs::remove_dir_all(&work);
        Ok(id)
    }

    /// A scratch directory beside the repositories (for servers' files and clients' clones).
    pub fn scratch(&self, name: &str) -> Result<PathBuf, GitServerError> {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(&path).map_err(io(format!("creating {}", path.display())))?;
        Ok(path)
    }
}

/// What the HTTPS server asks of a client.
#[derive(Clone, Default)]
pub enum HttpAuth {
    /// Nothing: anyone may clone and push.
    #[default]
    None,
    /// This token, as `Authorization: Bearer TOKEN` or as the basic-auth password.
    Token(String),
}

impl std::fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpAuth::None => f.write_str("None"),
            HttpAuth::Token(_) => f.write_str("Token(<redacted>)"),
        }
    }
}

impl HttpAuth {
    /// Whether the `Authorization` header `header` (if any) is let in.
    fn admits(&self, header: Option<&str>) -> bool {
        let HttpAuth::Token(token) = self else {
            return true;
        };
        let Some(header) = header else {
            return false;
        };
        if let Some(given) = header.strip_prefix("Bearer ") {
            return given == token;
        }
        let Some(encoded) = header.strip_prefix("Basic ") else {
            return false;
        };
        use base64::Engine as _;
        let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
            return false;
        };
        let decoded = String::from_utf8_lossy(&decoded);
        decoded
            .split_once(':')
            .is_some_and(|(_, password)| password == token)
    }
}

/// What runs before the server answers a push's first request (see [`HttpsGit::before_push`]).
pub type PushHook = Arc<dyn Fn() + Send + Sync>;

/// git's smart HTTP over TLS on loopback: `git http-backend` run per request. Stopped on drop.
#[derive(Debug)]
pub struct HttpsGit {
    /// `https://127.0.0.1:PORT` (no trailing slash).
    pub base: String,
    /// The CA the server's certificate is issued by, PEM.
    pub ca_pem: String,
    /// The same CA as a file (for `http.sslCAInfo`).
    pub ca_file: PathBuf,
    requests: Arc<std::sync::atomic::AtomicUsize>,
    cgi: Arc<Cgi>,
    serving: crate::https::Serving,
}

impl HttpsGit {
    /// Serves the repositories of `repos` on `127.0.0.1` with a certificate of `ca`, asking
    /// `auth` of every request (inside a tokio runtime).
    pub async fn start(
        repos: &GitRepos,
        ca: &TestCa,
        auth: HttpAuth,
    ) -> Result<HttpsGit, GitServerError> {
        let backend = git_exec_path()?.join("git-http-backend");
        if !backend.exists() {
            return Err(GitServerError::Missing {
                program: backend.display().to_string(),
                package: "git",
            });
        }
        let ip = std::net::IpAddr::from([127, 0, 0, 1]);
        let certificate = ca
            .server_certificate(ip)
            .map_err(|e| GitServerError::Failed(e.to_string()))?;
        let acceptor = crate::https::acceptor(&certificate).map_err(GitServerError::Failed)?;
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .map_err(io("binding 127.0.0.1"))?;
        let addr = listener.local_addr().map_err(io("reading the address"))?;
        let ca_file = repos.scratch("https")?.join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).map_err(io("writing ca.pem"))?;
        let cgi = Arc::new(Cgi {
            backend,
            root: repos.root(),
            auth,
            before_push: std::sync::Mutex::new(None),
        });
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = requests.clone();
        let serving_cgi = cgi.clone();
        let serving = crate::https::serve(listener, acceptor, move |req| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let cgi = serving_cgi.clone();
            async move { cgi.answer(req, addr).await }
        });
        Ok(HttpsGit {
            base: format!("https://{addr}"),
            ca_pem: ca.pem().to_owned(),
            ca_file,
            requests,
            cgi,
            serving,
        })
    }

    /// Runs `hook` (blocking, off the runtime) before answering the first request of every push
    /// (`GET …/info/refs?service=git-receive-pack`), so that the pusher sees what it did: another
    /// writer's commit made with [`GitRepos::commit`] lands between a client's fetch and its
    /// push, as it does when two writers race. `None` removes it.
    pub fn before_push(&self, hook: Option<PushHook>) {
        *self
            .cgi
            .before_push
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = hook;
    }

    /// The URL of repository `name`: `https://127.0.0.1:PORT/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    /// Requests answered so far (401s included).
    pub fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops serving: the server is unreachable from now on.
    pub fn stop(&self) {
        self.serving.stop();
    }
}

/// `git http-backend` as a CGI program.
struct Cgi {
    backend: PathBuf,
    root: PathBuf,
    auth: HttpAuth,
    before_push: std::sync::Mutex<Option<PushHook>>,
}

impl std::fmt::Debug for Cgi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cgi")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Cgi {
    async fn answer(
        &self,
        req: Request<hyper::body::Incoming>,
        local: SocketAddr,
    ) -> Response<Full<Bytes>> {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        if !self.auth.admits(header("authorization").as_deref()) {
            let mut answer = Response::new(Full::new(Bytes::from_static(b"Unauthorized\n")));
            *answer.status_mut() = StatusCode::UNAUTHORIZED;
            answer.headers_mut().insert(
                "www-authenticate",
                hyper::header::HeaderValue::from_static("Basic realm=\"git\""),
            );
            return answer;
        }
        let push_starts = req.uri().path().ends_with("/info/refs")
            && req.uri().query() == Some("service=git-receive-pack");
        let hook = push_starts
            .then(|| {
                self.before_push
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone()
            })
            .flatten();
        if let Some(hook) = hook {
            let _ = tokio::task::spawn_blocking(move || hook()).await;
        }
        let mut env: Vec<(String, String)> = vec![
            ("GIT_PROJECT_ROOT".into(), self.root.display().to_string()),
            ("GIT_HTTP_EXPORT_ALL".into(), "1".into()),
            ("REQUEST_METHOD".into(), req.method().to_string()),
            ("PATH_INFO".into(), req.uri().path().to_owned()),
            (
                "QUERY_STRING".into(),
                req.uri().query().unwrap_or("").to_owned(),
            ),
            ("REMOTE_ADDR".into(), "127.0.0.1".into()),
            ("SERVER_PORT".into(), local.port().to_string()),
            ("SERVER_PROTOCOL".into(), "HTTP/1.1".into()),
            ("GATEWAY_INTERFACE".into(), "CGI/1.1".into()),
        ];
        if matches!(self.auth, HttpAuth::Token(_)) {
            env.push(("REMOTE_USER".into(), "git".into()));
        }
        for (name, var) in [
            ("content-type", "CONTENT_TYPE"),
            ("content-encoding", "HTTP_CONTENT_ENCODING"),
            ("git-protocol", "HTTP_GIT_PROTOCOL"),
        ] {
            if let Some(value) = header(name) {
                env.push((var.into(), value));
            }
        }
        let body = match Limited::new(req.into_body(), MAX_REQUEST_BODY)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(e) => return plain(StatusCode::BAD_REQUEST, e.to_string()),
        };
        env.push(("CONTENT_LENGTH".into(), body.len().to_string()));
        let backend = self.backend.clone();
        let ran = tokio::task::spawn_blocking(move || run_cgi(&backend, &env, &body)).await;
        match ran {
            Ok(Ok(output)) => cgi_response(&output),
            Ok(Err(e)) => plain(StatusCode::INTERNAL_SERVER_ERROR, e),
            Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        }
    }
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut answer = Response::new(Full::new(Bytes::from(text)));
    *answer.status_mut() = status;
    answer
}

/// Runs the CGI program with `env` and `body` on stdin; its whole stdout.
fn run_cgi(backend: &Path, env: &[(String, String)], body: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = Command::new(backend)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", backend.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let body = body.to_vec();
    // Written from a thread: the program may answer before it has read everything.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !output.status.success() && output.stdout.is_empty() {
        return Err(format!(
            "git http-backend: {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output.stdout)
}

/// A CGI program's output as an HTTP response: its header lines (`Status:` sets the code), a
/// blank line, the body.
fn cgi_response(output: &[u8]) -> Response<Full<Bytes>> {
    let (head, body) = match find(output, b"\r\n\r\n") {
        Some(at) => (&output[..at], &output[at + 4..]),
        None => match find(output, b"\n\n") {
            Some(at) => (&output[..at], &output[at + 2..]),
            None => (output, &[][..]),
        },
    };
    let mut answer = Response::new(Full::new(Bytes::copy_from_slice(body)));
    for line in String::from_utf8_lossy(head).lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            if let Some(code) = value
                .split_whitespace()
                .next()
                .and_then(|c| c.parse::<u16>().ok())
                .and_then(|c| StatusCode::from_u16(c).ok())
            {
                *answer.status_mut() = code;
            }
            continue;
        }
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.trim().as_bytes()),
            hyper::header::HeaderValue::from_str(value),
        ) {
            answer.headers_mut().append(name, value);
        }
    }
    answer
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// An SSH key pair made by `ssh-keygen` (ed25519, no passphrase) in a directory of the test's.
#[derive(Clone)]
pub struct SshKey {
    /// The private key file (OpenSSH format, 0600).
    pub private_key_file: PathBuf,
    /// The private key file's text.
    pub private_key: String,
    /// The public key line (`ssh-ed25519 AAAA… comment`).
    pub public_key: String,
}

impl std::fmt::Debug for SshKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshKey")
            .field("private_key_file", &self.private_key_file)
            .field("public_key", &self.public_key)
            .finish_non_exhaustive()
    }
}

impl SshKey {
    /// A new ed25519 key at `dir/name` (and `dir/name.pub`).
    pub fn generate(dir: &Path, name: &str) -> Result<SshKey, GitServerError> {
        let file = dir.join(name);
        let shown = file.display().to_string();
        run(
            Path::new("ssh-keygen"),
            &[
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "snowctl-test",
                "-f",
                &shown,
            ],
            "openssh-client",
        )?;
        let private_key = std::fs::read_to_string(&file).map_err(io(format!("reading {shown}")))?;
        let public_key = std::fs::read_to_string(format!("{shown}.pub"))
            .map_err(io(format!("reading {shown}.pub")))?
            .trim()
            .to_owned();
        Ok(SshKey {
            private_key_file: file,
            private_key,
            public_key,
        })
    }

    /// The `known_hosts` line naming this key as the host key of `127.0.0.1:port`.
    pub fn known_hosts_line(&self, port: u16) -> String {
        let mut fields = self.public_key.split_whitespace();
        let (kind, key) = (fields.next().unwrap_or(""), fields.next().unwrap_or(""));
        format!("[127.0.0.1]:{port} {kind} {key}")
    }
}

/// Debian's OpenSSH server on loopback serving git through `git-shell`. Stopped on drop.
pub struct SshGit {
    child: Child,
    /// The port it listens on (on `127.0.0.1`).
    pub port: u16,
    /// The user the server runs as, the one the client logs in as.
    pub user: String,
    /// The key the server lets in (forced through git-shell).
    pub client_key: SshKey,
    /// The server's host key (its public half is in `known_hosts`).
    pub host_key: SshKey,
    /// The `known_hosts` line for the host key: `[127.0.0.1]:PORT ssh-ed25519 AAAA…`.
    pub known_hosts: String,
    /// A file holding that line.
    pub known_hosts_file: PathBuf,
    root: PathBuf,
    log: PathBuf,
}

impl std::fmt::Debug for SshGit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshGit")
            .field("port", &self.port)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

fn free_port() -> Result<u16, GitServerError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(io("finding a free port"))
}

impl SshGit {
    /// Starts `sshd` for the repositories of `repos` (blocking; up within seconds).
    pub fn start(repos: &GitRepos) -> Result<SshGit, GitServerError> {
        if !Path::new(SSHD).exists() {
            return Err(GitServerError::Missing {
                program: SSHD.into(),
                package: "openssh-server",
            });
        }
        let git_shell = git_exec_path()?.join("git-shell");
        if !git_shell.exists() {
            return Err(GitServerError::Missing {
                program: git_shell.display().to_string(),
                package: "git",
            });
        }
        let user = run(Path::new("id"), &["-un"], "coreutils")?;
        let dir = repos.scratch(&format!("sshd-{}", next_id()))?;
        // sshd started by root checks its privilege separation directory.
        if run(Path::new("id"), &["-u"], "coreutils")? == "0" {
            std::fs::create_dir_all("/run/sshd").map_err(io("creating /run/sshd"))?;
        }
        let host_key = SshKey::generate(&dir, "ssh_host_ed25519_key")?;
        let client_key = SshKey::generate(&dir, "client_ed25519")?;
        let authorized = format!(
            "command=\"{} -c \\\"$SSH_ORIGINAL_COMMAND\\\"\",restrict {}\n",
            git_shell.display(),
            client_key.public_key
        );
        let authorized_keys = dir.join("authorized_keys");
        std::fs::write(&authorized_keys, authorized).map_err(io("writing authorized_keys"))?;
        let log = dir.join("sshd.log");
        for _attempt in 0..5 {
            let port = free_port()?;
            let config = format!(
                "ListenAddress 127.0.0.1:{port}\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\n\
                 AllowUsers {user}\nUsePAM no\nStrictModes no\nPubkeyAuthentication yes\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PermitRootLogin prohibit-password\nAllowTcpForwarding no\nX11Forwarding no\n\
                 AllowAgentForwarding no\nPermitTunnel no\nLogLevel VERBOSE\n",
                host_key.private_key_file.display(),
                dir.join("sshd.pid").display(),
                authorized_keys.display(),
            );
            let config_file = dir.join("sshd_config");
            std::fs::write(&config_file, config).map_err(io("writing sshd_config"))?;
            let log_file = std::fs::File::create(&log).map_err(io("creating sshd.log"))?;
            let mut child = Command::new(SSHD)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&config_file)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log_file)
                .spawn()
                .map_err(io(format!("starting {SSHD}")))?;
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    let known_hosts = host_key.known_hosts_line(port);
                    let known_hosts_file = dir.join("known_hosts");
                    std::fs::write(&known_hosts_file, format!("{known_hosts}\n"))
                        .map_err(io("writing known_hosts"))?;
                    return Ok(SshGit {
                        child,
                        port,
                        user,
                        client_key,
                        host_key,
                        known_hosts,
                        known_hosts_file,
                        root: repos.root(),
                        log,
                    });
                }
                if child.try_wait().ok().flatten().is_some() {
                    break; // the port was taken meanwhile, or the config refused: try again
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let mut text = String::new();
        let _ = std::fs::File::open(&log).and_then(|mut f| f.read_to_string(&mut text));
        Err(GitServerError::Failed(format!(
            "{SSHD} did not start: {}",
            text.trim()
        )))
    }

    /// The URL of repository `name`: `ssh://USER@127.0.0.1:PORT/<repositories>/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            self.root.join(name).display()
        )
    }

    /// The `GIT_SSH_COMMAND` a test's own `git` uses: this key, these known hosts, strict host
    /// key checking, no other configuration.
    pub fn ssh_command(&self, key: &Path, known_hosts: &Path) -> String {
        format!(
            "ssh -F /dev/null -i {} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes \
             -o StrictHostKeyChecking=yes -o UserKnownHostsFile={} -o ConnectTimeout=10",
            key.display(),
            known_hosts.display()
        )
    }

    /// What sshd logged so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for SshGit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn next_id() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_admitted_as_bearer_or_basic_password_only() {
        use base64::Engine as _;
        let auth = HttpAuth::Token("s3cret".into());
        let basic = |s: &str| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(s)
            )
        };
        assert!(auth.admits(Some("Bearer s3cret")));
        assert!(auth.admits(Some(&basic("x-access-token:s3cret"))));
        assert!(!auth.admits(None));
        assert!(!auth.admits(Some("Bearer wrong")));
        assert!(!auth.admits(Some(&basic("s3cret:wrong"))));
        assert!(HttpAuth::None.admits(None));
        assert!(!format!("{auth:?}").contains("s3cret"));
    }

    #[test]
    fn cgi_output_becomes_a_response() {
        let answer = cgi_response(b"Status: 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nno");
        assert_eq!(answer.status(), StatusCode::FORBIDDEN);
        assert_eq!(answer.headers()["content-type"], "text/plain");
    }
}
