//! Files read natively: a run's receipts, beside the rules (ctypes lets go
//! of the interpreter's lock for the call).

use std::fs::File;
use std::io::Read;
use std::os::raw::{c_char, c_int};
use std::slice;

#[cfg(target_os = "linux")]
extern "C" {
    fn openat(dirfd: c_int, pathname: *const c_char, flags: c_int, ...) -> c_int;
}

/// `O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`, as Linux spells them
/// here (None elsewhere: the caller reads the files itself).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const OPEN_FLAGS: Option<c_int> = Some(0o400000 | 0o4000 | 0o2000000);
#[cfg(all(target_os = "linux", any(target_arch = "aarch64", target_arch = "arm")))]
const OPEN_FLAGS: Option<c_int> = Some(0o100000 | 0o4000 | 0o2000000);
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm")
)))]
const OPEN_FLAGS: Option<c_int> = None;

/// Files read by [`rtlc_read_files`]: their bytes one after another.
pub struct Files {
    pub(crate) data: Vec<u8>,
}

#[cfg(target_os = "linux")]
unsafe fn open_in(dir_fd: c_int, name: &[u8], flags: c_int) -> Option<File> {
    use std::os::unix::io::FromRawFd;
    let mut path = Vec::with_capacity(name.len() + 1);
    path.extend_from_slice(name);
    path.push(0);
    let fd = openat(dir_fd, path.as_ptr() as *const c_char, flags);
    if fd < 0 {
        None
    } else {
        Some(File::from_raw_fd(fd))
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn open_in(_dir_fd: c_int, _name: &[u8], _flags: c_int) -> Option<File> {
    None
}

/// Read the regular file `name` of the folder open as `dir_fd`, never
/// through a symlink, at most `max_size` bytes, onto the end of `data`;
/// false (and `data` as it was) where it cannot be read so.
pub(crate) unsafe fn read_into(
    dir_fd: c_int,
    name: &[u8],
    max_size: u64,
    flags: c_int,
    data: &mut Vec<u8>,
) -> bool {
    let at = data.len();
    let mut file = match open_in(dir_fd, name, flags) {
        Some(f) => f,
        None => return false,
    };
    let size = match file.metadata() {
        Ok(m) if m.is_file() && m.len() <= max_size => m.len(),
        _ => return false,
    };
    // the size it has and one byte more: a short read of a regular file
    // is its end; a full one, it grew meanwhile: read on to its end
    data.resize(at + size as usize + 1, 0);
    let got = match file.read(&mut data[at..]) {
        Ok(got) => got,
        Err(_) => {
            data.truncate(at);
            return false;
        }
    };
    data.truncate(at + got);
    if (got as u64 > size && file.read_to_end(data).is_err()) || (data.len() - at) as u64 > max_size
    {
        data.truncate(at);
        return false;
    }
    true
}

/// The flags files are opened with here (None: files are not read here).
pub(crate) fn open_flags() -> Option<c_int> {
    OPEN_FLAGS
}

/// Read the regular files `names` (each followed by `\n`) in the folder
/// open as `dir_fd`, never through a symlink, each at most `max_size`
/// bytes. For each, `meta` gets two i64: its length and its offset in the
/// bytes returned, or -1 and 0 where it cannot be read so (absent, a
/// symlink, not a regular file, too big, an error: the caller reads that
/// one itself, for the exact message). Returns the bytes (free them with
/// [`rtlc_free_files`]; [`rtlc_files_data`] and [`rtlc_files_len`] give
/// them), or null where files cannot be read here at all.
///
/// # Safety
/// `names` must be valid for `names_len` bytes, `meta` for two i64 a name.
#[no_mangle]
pub unsafe extern "C" fn rtlc_read_files(
    dir_fd: c_int,
    names: *const u8,
    names_len: usize,
    max_size: u64,
    meta: *mut i64,
) -> *mut Files {
    let flags = match OPEN_FLAGS {
        Some(f) => f,
        None => return std::ptr::null_mut(),
    };
    let names = slice::from_raw_parts(names, names_len);
    let count = names.iter().filter(|c| **c == b'\n').count();
    let meta = slice::from_raw_parts_mut(meta, 2 * count);
    let mut data: Vec<u8> = Vec::new();
    for (n, name) in names.split(|c| *c == b'\n').take(count).enumerate() {
        let at = data.len();
        if read_into(dir_fd, name, max_size, flags, &mut data) {
            meta[2 * n] = (data.len() - at) as i64;
            meta[2 * n + 1] = at as i64;
        } else {
            meta[2 * n] = -1;
            meta[2 * n + 1] = 0;
        }
    }
    Box::into_raw(Box::new(Files { data }))
}

/// The bytes of files read by [`rtlc_read_files`].
///
/// # Safety
/// `files` must come from [`rtlc_read_files`] and not be freed.
#[no_mangle]
pub unsafe extern "C" fn rtlc_files_data(files: *const Files) -> *const u8 {
    (*files).data.as_ptr()
}

/// How many bytes [`rtlc_files_data`] gives.
///
/// # Safety
/// As [`rtlc_files_data`].
#[no_mangle]
pub unsafe extern "C" fn rtlc_files_len(files: *const Files) -> usize {
    (*files).data.len()
}

/// Free what [`rtlc_read_files`] returned.
///
/// # Safety
/// `files` must come from [`rtlc_read_files`], freed once.
#[no_mangle]
pub unsafe extern "C" fn rtlc_free_files(files: *mut Files) {
    if !files.is_null() {
        drop(Box::from_raw(files));
    }
}
