//! Writes file contents as blobs into the store. A few files are stored loose on the calling
//! thread; once enough are waiting, a pool of hashing threads takes them while the walk is
//! still finding more, each thread reading, hashing and compressing into packs of its own.

use std::fs;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use git2::{ObjectType, Odb, OdbLookupFlags, Oid, Repository};

use crate::cache::MODE_LINK;
use crate::error::{Result, VcsError};
use crate::pack::{object_id, PackBatch, PACK_MAX_FILE};
use crate::progress::Ticker;
use crate::walk::rel_path;

/// Files up to this size are read whole; bigger ones are streamed by libgit2.
const READ_WHOLE: u64 = 8 * 1024 * 1024;
/// Fewer files than this are hashed on the calling thread (stored loose, no pack).
pub(crate) const PARALLEL_MIN: usize = 256;
/// Files handed to a hashing thread at a time.
const JOB_BATCH: usize = 64;
/// How often a waiting caller wakes up to report progress.
const TICK: Duration = Duration::from_millis(100);

/// A file to store: its position in the caller's list, path and git mode.
struct Job {
    idx: usize,
    rel: Vec<u8>,
    mode: u32,
}

/// What a hashing thread answers for a batch of jobs.
type Answer = Result<Vec<(usize, Option<Oid>)>>;

fn stopped() -> VcsError {
    VcsError::Io {
        context: "hashing files".into(),
        source: std::io::Error::other("a hashing thread stopped"),
    }
}

/// The hashing threads.
struct Pool {
    jobs: Option<mpsc::Sender<Vec<Job>>>,
    answers: mpsc::Receiver<Answer>,
    workers: Vec<JoinHandle<()>>,
    batch: Vec<Job>,
    /// Jobs sent and not answered yet.
    open: usize,
}

impl Pool {
    /// Starts `threads` hashing threads; `None` when none could be started.
    fn start(repo_dir: &Path, root: &Path, threads: usize) -> Option<Pool> {
        let (jobs, job_rx) = mpsc::channel::<Vec<Job>>();
        let (answer_tx, answers) = mpsc::channel::<Answer>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let mut workers = Vec::new();
        for n in 0..threads {
            let (repo_dir, root) = (repo_dir.to_path_buf(), root.to_path_buf());
            let (job_rx, answer_tx) = (job_rx.clone(), answer_tx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("cairn-hash-{n}"))
                .spawn(move || work(&repo_dir, &root, &job_rx, &answer_tx));
            match spawned {
                Ok(h) => workers.push(h),
                Err(e) => tracing::debug!(error = %e, "cannot start a hashing thread"),
            }
        }
        if workers.is_empty() {
            return None;
        }
        Some(Pool {
            jobs: Some(jobs),
            answers,
            workers,
            batch: Vec::with_capacity(JOB_BATCH),
            open: 0,
        })
    }

    fn submit(&mut self, job: Job) {
        self.batch.push(job);
        if self.batch.len() >= JOB_BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(JOB_BATCH));
        self.open += batch.len();
        // A failed send (every thread gone) shows as unanswered jobs at the end.
        if let Some(tx) = &self.jobs {
            let _ = tx.send(batch);
        }
    }
}

/// One hashing thread: stores the files of each batch it takes, then writes its last pack.
fn work(
    repo_dir: &Path,
    root: &Path,
    jobs: &Mutex<mpsc::Receiver<Vec<Job>>>,
    answers: &mpsc::Sender<Answer>,
) {
    let run = || -> Result<()> {
        let repo = Repository::open_bare(repo_dir)?;
        let odb = repo.odb()?;
        let mut pack = PackBatch::new(repo_dir);
        let mut buf = Vec::new();
        let (mut busy, mut files) = (Duration::ZERO, 0usize);
        loop {
            let next = match jobs.lock() {
                Ok(rx) => rx.recv(),
                Err(_) => break,
            };
            let t = std::time::Instant::now();
            let Ok(batch) = next else { break };
            let mut out = Vec::with_capacity(batch.len());
            for job in batch {
                let id = store_packed(&repo, &odb, &mut pack, root, &job, &mut buf)?;
                out.push((job.idx, id));
                files += 1;
            }
            busy += t.elapsed();
            if answers.send(Ok(out)).is_err() {
                break;
            }
        }
        // Answers are only used once every thread has finished, so after this write.
        tracing::debug!(
            files,
            busy_ms = busy.as_millis() as u64,
            "hashing thread done"
        );
        pack.write()
    };
    if let Err(e) = run() {
        let _ = answers.send(Err(e));
    }
}

/// What reading a file gave.
enum Read {
    Data,
    Gone,
    TooBig,
}

/// Reads the regular file `abs` into `buf` (not following links, never blocking on a FIFO).
fn read_file(abs: &Path, buf: &mut Vec<u8>) -> Read {
    let Ok(mut f) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(abs)
    else {
        return Read::Gone;
    };
    let len = match f.metadata() {
        Ok(m) if m.is_file() && m.len() > PACK_MAX_FILE => return Read::TooBig,
        Ok(m) if m.is_file() => m.len(),
        _ => return Read::Gone,
    };
    buf.clear();
    // As git does: the `len` bytes `fstat` gave (a file growing meanwhile is cut there).
    match (&mut f).take(len).read_to_end(buf) {
        Ok(_) => Read::Data,
        Err(e) => {
            tracing::debug!(path = %abs.display(), error = %e, "cannot read file");
            Read::Gone
        }
    }
}

/// Stores one entry into `pack` (big files loose); `None` when it vanished or is unreadable.
fn store_packed(
    repo: &Repository,
    odb: &Odb<'_>,
    pack: &mut PackBatch,
    root: &Path,
    job: &Job,
    buf: &mut Vec<u8>,
) -> Result<Option<Oid>> {
    let abs = root.join(rel_path(&job.rel));
    if job.mode == MODE_LINK {
        let Ok(target) = fs::read_link(&abs) else {
            return Ok(None);
        };
        buf.clear();
        buf.extend_from_slice(target.as_os_str().as_bytes());
    } else {
        match read_file(&abs, buf) {
            Read::Data => {}
            Read::Gone => return Ok(None),
            Read::TooBig => return hash_one(repo, root, &job.rel, job.mode),
        }
    }
    let id = object_id(ObjectType::Blob, buf)?;
    if !pack.has(&id) && !odb.exists_ext(id, OdbLookupFlags::NO_REFRESH) {
        pack.add(ObjectType::Blob, id, buf)?;
    }
    Ok(Some(id))
}

/// Collects the blob ids of a walk's entries as they are found: cache hits at once, the rest
/// hashed on the calling thread when they are few, else on a pool started as soon as
/// [`PARALLEL_MIN`] are waiting.
pub(crate) struct Feeder<'a> {
    repo_dir: &'a Path,
    root: &'a Path,
    threads: usize,
    ids: Vec<Option<Oid>>,
    hashed: Vec<bool>,
    waiting: Vec<Job>,
    pool: Option<Pool>,
    /// Entries with a final id (cache hits, hashed, or not to be hashed).
    done: u64,
    /// The first error of a hashing thread.
    failed: Option<VcsError>,
    ticker: &'a mut Ticker,
}

/// What a [`Feeder`] gave: ids in walk order, which were hashed, and how many.
pub(crate) struct Fed {
    /// Blob ids (`None` = left out: a folder, vanished or unreadable).
    pub ids: Vec<Option<Oid>>,
    /// Which entries were hashed (not stat-cache hits).
    pub hashed: Vec<bool>,
    /// How many were hashed.
    pub count: usize,
}

impl<'a> Feeder<'a> {
    /// A feeder storing into the store at `repo_dir` the files under `root`.
    pub fn new(repo_dir: &'a Path, root: &'a Path, ticker: &'a mut Ticker) -> Feeder<'a> {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(4);
        Feeder {
            repo_dir,
            root,
            threads,
            ids: Vec::new(),
            hashed: Vec::new(),
            waiting: Vec::new(),
            pool: None,
            done: 0,
            failed: None,
            ticker,
        }
    }

    /// Uses `n` hashing threads instead (0: all on the calling thread, stored loose).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// Entry `idx` (the next one) was found: `cached` is its id from the stat cache; `hash`
    /// says it must be read and stored.
    pub fn found(&mut self, idx: usize, rel: &[u8], mode: u32, cached: Option<Oid>, hash: bool) {
        debug_assert_eq!(idx, self.ids.len());
        self.ids.push(cached);
        self.hashed.push(hash);
        if !hash {
            self.done += 1;
        } else {
            let job = Job {
                idx,
                rel: rel.to_vec(),
                mode,
            };
            match self.pool.as_mut() {
                Some(p) => p.submit(job),
                None => {
                    self.waiting.push(job);
                    if self.waiting.len() >= PARALLEL_MIN && self.threads > 0 {
                        match Pool::start(self.repo_dir, self.root, self.threads) {
                            Some(mut pool) => {
                                for j in self.waiting.drain(..) {
                                    pool.submit(j);
                                }
                                self.pool = Some(pool);
                            }
                            // Everything on this thread, at the end.
                            None => self.threads = 0,
                        }
                    }
                }
            }
        }
        if self.pool.is_some() {
            self.collect(false);
        }
        self.ticker.tick(self.done, None);
    }

    /// Takes the answers that arrived (waiting up to [`TICK`] for one when `wait`); false once
    /// every hashing thread is gone. A thread's error is kept for [`Feeder::finish`].
    fn collect(&mut self, wait: bool) -> bool {
        let Some(pool) = self.pool.as_mut() else {
            return false;
        };
        let mut first = true;
        loop {
            let next = if wait && first {
                pool.answers.recv_timeout(TICK)
            } else {
                pool.answers.try_recv().map_err(|e| match e {
                    mpsc::TryRecvError::Empty => mpsc::RecvTimeoutError::Timeout,
                    mpsc::TryRecvError::Disconnected => mpsc::RecvTimeoutError::Disconnected,
                })
            };
            first = false;
            match next {
                Ok(Ok(list)) => {
                    pool.open -= list.len().min(pool.open);
                    self.done += list.len() as u64;
                    for (i, id) in list {
                        if let Some(slot) = self.ids.get_mut(i) {
                            *slot = id;
                        }
                    }
                }
                Ok(Err(e)) => {
                    self.failed.get_or_insert(e);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return true,
                Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// Waits for every file to be stored (packs written) and returns the ids.
    pub fn finish(mut self, repo: &Repository) -> Result<Fed> {
        let count = self.hashed.iter().filter(|h| **h).count();
        let total = Some(self.ids.len() as u64);
        if let Some(pool) = self.pool.as_mut() {
            pool.send();
            // Closing the queue lets each thread write its last pack and stop.
            pool.jobs = None;
            while self.collect(true) {
                self.ticker.tick(self.done, total);
            }
            let pool = self.pool.take().ok_or_else(stopped)?;
            let mut panicked = false;
            for w in pool.workers {
                panicked |= w.join().is_err();
            }
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            if panicked || pool.open != 0 {
                return Err(stopped());
            }
        }
        for job in std::mem::take(&mut self.waiting) {
            self.ids[job.idx] = hash_one(repo, self.root, &job.rel, job.mode)?;
            self.done += 1;
            self.ticker.tick(self.done, total);
        }
        self.ticker.finish(self.done, total);
        Ok(Fed {
            ids: self.ids,
            hashed: self.hashed,
            count,
        })
    }
}

/// Stores one entry as a loose blob.
pub(crate) fn hash_one(
    repo: &Repository,
    root: &Path,
    rel: &[u8],
    mode: u32,
) -> Result<Option<Oid>> {
    let abs: PathBuf = root.join(rel_path(rel));
    if mode == MODE_LINK {
        return match fs::read_link(&abs) {
            Ok(target) => Ok(Some(repo.blob(target.as_os_str().as_bytes())?)),
            Err(_) => Ok(None),
        };
    }
    let len = match fs::symlink_metadata(&abs) {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(None),
    };
    if len <= READ_WHOLE {
        return match fs::read(&abs) {
            Ok(data) => Ok(Some(repo.blob(&data)?)),
            Err(e) => {
                tracing::debug!(path = %abs.display(), error = %e, "cannot read file");
                Ok(None)
            }
        };
    }
    match repo.blob_path(&abs) {
        Ok(id) => Ok(Some(id)),
        Err(e) => match fs::File::open(&abs) {
            Ok(_) => Err(e.into()),
            Err(_) => Ok(None),
        },
    }
}
