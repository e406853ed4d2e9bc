//! Starts Chromium with `--remote-debugging-pipe`: its DevTools commands arrive on fd 3 and its
//! messages leave on fd 4, two pipes only this process holds the other ends of. Chromium gets
//! the environment every child of Vaider gets (`child_env`: no secret in it), and is killed
//! when the returned child is dropped.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::process::Stdio;

use tokio::net::unix::pipe;
use tokio::process::Child;

/// A started Chromium and our ends of its DevTools pipes.
pub(crate) struct Piped {
    pub child: Child,
    /// Commands into Chromium (its fd 3).
    pub to_chromium: pipe::Sender,
    /// Chromium's answers and events (its fd 4).
    pub from_chromium: pipe::Receiver,
}

/// Starts `program` with `args` and the DevTools pipes on fds 3 and 4.
pub(crate) fn start(program: &Path, args: &[String]) -> io::Result<Piped> {
    let args = args
        .iter()
        .map(String::as_str)
        .chain(["--remote-debugging-pipe"]);
    let (chromium_reads, we_write) = pipe_pair()?;
    let (we_read, chromium_writes) = pipe_pair()?;
    let mut command = vaider_core::child_env::async_command(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let (reads, writes) = (chromium_reads.as_raw_fd(), chromium_writes.as_raw_fd());
    // SAFETY: the closure runs in the child between fork and exec and calls only fcntl and
    // dup2, which are async-signal-safe; it touches no memory of the parent.
    unsafe {
        command.pre_exec(move || place_on_3_and_4(reads, writes));
    }
    let child = command.spawn()?;
    // Chromium holds its ends now; ours closed, its exit reads as the end of the pipe.
    drop((chromium_reads, chromium_writes));
    Ok(Piped {
        child,
        to_chromium: pipe::Sender::from_owned_fd(we_write)?,
        from_chromium: pipe::Receiver::from_owned_fd(we_read)?,
    })
}

/// In the child: `reads` becomes fd 3 and `writes` fd 4 (both kept across exec). Each is first
/// copied above 9, so placing one cannot close the other when it already sat on 3 or 4.
fn place_on_3_and_4(reads: RawFd, writes: RawFd) -> io::Result<()> {
    // SAFETY (each call): fcntl and dup2 on descriptors the child inherited open.
    let reads = check(unsafe { libc::fcntl(reads, libc::F_DUPFD_CLOEXEC, 10) })?;
    let writes = check(unsafe { libc::fcntl(writes, libc::F_DUPFD_CLOEXEC, 10) })?;
    check(unsafe { libc::dup2(reads, 3) })?;
    check(unsafe { libc::dup2(writes, 4) })?;
    Ok(())
}

/// A pipe, both ends closed on exec: (read end, write end).
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn check(result: libc::c_int) -> io::Result<RawFd> {
    match result {
        -1 => Err(io::Error::last_os_error()),
        fd => Ok(fd),
    }
}
