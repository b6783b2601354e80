//! The memo's folder, opened so that nobody else can steer what cfgctl reads or deletes in it.
//!
//! A cache folder lives in a place other users may reach (`$XDG_CACHE_HOME` can point
//! anywhere, `/tmp` included). So the folder is opened once, without following a symbolic link,
//! and checked on the open handle: it must belong to this user and be writable by nobody else.
//! Every later step works relative to that handle (`openat`, `renameat`, `unlinkat`), so
//! swapping a path component for a symlink after the check changes nothing. An entry is read
//! only when it is a regular file of this user (opened non-blocking: a FIFO planted in its
//! place cannot hang a plan), and the trim removes only entries cfgctl wrote, recognised by
//! name (64 hex digits) and header.
//!
//! The folder also holds the user's memo secret (`key`, 32 random bytes, 0600): entries are
//! authenticated under it (and the API token when there is one), so an entry cannot be forged
//! by someone who cannot read the folder, even for targets without a token.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

/// The first line of every entry cfgctl writes (the trim deletes nothing else).
pub(super) const HEADER: &[u8] = b"cfgctl plan cache entry\n";
/// The memo secret's file name in the folder.
const KEY_FILE: &str = "key";
/// The folder of entries inside the cache folder.
const PLANS: &str = "plans";

/// The entries' folder, held open.
pub(super) struct Folder {
    plans: OwnedFd,
}

/// Why the folder cannot be used (in words: it is shown as the reason).
pub(super) type Refusal = String;

impl Folder {
    /// Opens (making it when missing) the cache folder `dir` and its entries' folder, both
    /// owned by `owner` and private; returns them with the memo secret.
    pub(super) fn open(dir: &Path, owner: u32) -> Result<(Folder, [u8; 32]), Refusal> {
        make_private_dirs(dir).map_err(|e| e.to_string())?;
        let top = open_dir(rustix::fs::CWD, dir, owner)?;
        match rustix::fs::mkdirat(&top, PLANS, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(format!("cannot make {PLANS}/: {e}")),
        }
        let plans = open_dir(&top, Path::new(PLANS), owner)?;
        let secret = secret(&top, owner)?;
        Ok((Folder { plans }, secret))
    }

    /// The bytes of entry `name` (at most `limit` + 1 of them), when it is a regular file of
    /// this folder's owner.
    pub(super) fn read(&self, name: &str, limit: u64) -> Option<Vec<u8>> {
        let (file, _) = open_regular(&self.plans, name)?;
        let mut text = Vec::new();
        file.take(limit + 1).read_to_end(&mut text).ok()?;
        Some(text)
    }

    /// Whether the folder holds anything named like an entry (unreadable: assumed so).
    pub(super) fn has_entries(&self) -> bool {
        let Ok(dir) = rustix::fs::Dir::read_from(&self.plans) else {
            return true;
        };
        dir.filter_map(Result::ok)
            .any(|e| e.file_name().to_str().is_ok_and(is_entry_name))
    }

    /// Writes entry `name` whole (a private temporary file, then renamed over the old one).
    pub(super) fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = format!(".{name}.{}.tmp", fastrand::u64(..));
        let written = create_private(&self.plans, &tmp).and_then(|mut f| f.write_all(bytes));
        let renamed = written.and_then(|()| {
            rustix::fs::renameat(&self.plans, &*tmp, &self.plans, name).map_err(Into::into)
        });
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&self.plans, &*tmp, AtFlags::empty());
        }
        renamed
    }

    /// Removes the oldest of cfgctl's entries beyond `keep`; nothing else is touched.
    pub(super) fn trim(&self, keep: usize) {
        let Ok(dir) = rustix::fs::Dir::read_from(&self.plans) else {
            return;
        };
        let mut entries: Vec<(i64, i64, String)> = dir
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
            .filter(|name| is_entry_name(name))
            .filter_map(|name| {
                let (mut file, meta) = open_regular(&self.plans, &name)?;
                let mut head = vec![0; HEADER.len()];
                file.read_exact(&mut head).ok()?;
                (head == HEADER).then(|| (meta.mtime(), meta.mtime_nsec(), name))
            })
            .collect();
        if entries.len() <= keep {
            return;
        }
        entries.sort();
        for (_, _, name) in &entries[..entries.len() - keep] {
            let _ = rustix::fs::unlinkat(&self.plans, name.as_str(), AtFlags::empty());
        }
    }
}

/// This process's effective user, the owner the folder must have.
pub(super) fn current_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// An entry's name: 64 lower-case hex digits.
fn is_entry_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn make_private_dirs(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Opens a directory without following a symlink at its last component, and checks the open
/// handle: a directory of `owner` that nobody else may write.
fn open_dir(at: impl std::os::fd::AsFd, path: &Path, owner: u32) -> Result<OwnedFd, Refusal> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(at, path, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => {
            format!(
                "{} is not a directory (a symbolic link is not followed)",
                path.display()
            )
        }
        e => format!("cannot open {}: {e}", path.display()),
    })?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if meta.uid() != owner {
        return Err(format!(
            "{} belongs to user {}, not to this user ({owner})",
            path.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{}: others may write it (make it 0700)",
            path.display()
        ));
    }
    Ok(OwnedFd::from(file))
}

/// Opens `name` in `dir` for reading when it is a regular file of the folder's owner (the
/// folder was checked to be theirs; a file someone else planted is not). Non-blocking and
/// without following a symlink, so no planted FIFO or device can make it wait.
fn open_regular(dir: &OwnedFd, name: &str) -> Option<(std::fs::File, std::fs::Metadata)> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().ok()?;
    (meta.is_file() && meta.uid() == current_user()).then_some((file, meta))
}

fn create_private(dir: &OwnedFd, name: &str) -> std::io::Result<std::fs::File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))?;
    Ok(std::fs::File::from(fd))
}

/// The user's memo secret: read from the folder, or made (32 bytes from the system's
/// random source) the first time.
fn secret(top: &OwnedFd, owner: u32) -> Result<[u8; 32], Refusal> {
    if let Some(key) = read_secret(top, owner)? {
        return Ok(key);
    }
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .map_err(|e| format!("cannot make the cache's secret: {e}"))?;
    let tmp = format!(".{KEY_FILE}.{}.tmp", fastrand::u64(..));
    create_private(top, &tmp)
        .and_then(|mut f| f.write_all(&key))
        .and_then(|()| rustix::fs::renameat(top, &*tmp, top, KEY_FILE).map_err(Into::into))
        .map_err(|e| {
            let _ = rustix::fs::unlinkat(top, &*tmp, AtFlags::empty());
            format!("cannot write the cache's secret: {e}")
        })?;
    // Two first runs at once: both read the one that stayed.
    read_secret(top, owner)?.ok_or_else(|| "the cache's secret vanished".to_string())
}

fn read_secret(top: &OwnedFd, owner: u32) -> Result<Option<[u8; 32]>, Refusal> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(top, KEY_FILE, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => return Err(format!("cannot read the cache's secret: {e}")),
    };
    let mut file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() || meta.uid() != owner || meta.mode() & 0o077 != 0 || meta.len() != 32 {
        return Err("the cache's secret is not a private 32-byte file of this user".into());
    }
    let mut key = [0u8; 32];
    file.read_exact(&mut key).map_err(|e| e.to_string())?;
    Ok(Some(key))
}
