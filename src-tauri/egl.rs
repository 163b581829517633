//! Keeps the software GL stack out of the app process on X11 machines without a GPU.
//!
//! Painting in software (`WEBKIT_DISABLE_COMPOSITING_MODE`), the app process only probes GL:
//! GTK looks for GLX visuals and WebKit opens an EGL display. Each probe loads Mesa's software
//! driver, whose LLVM relocations alone cost about 8 MiB. The web process, which does paint
//! with EGL, is left as it is.

/// The libglvnd variable naming the EGL vendor files to load.
const VENDORS: &str = "__EGL_VENDOR_LIBRARY_FILENAMES";
/// Mesa's switch to GLX through the X server (no driver loaded in the client).
const INDIRECT: &str = "LIBGL_ALWAYS_INDIRECT";
/// Whether this process set [`INDIRECT`] (and so should take it back).
static SET_INDIRECT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// `EGL_EXTENSIONS`, asked of `EGL_NO_DISPLAY`: the call that makes libglvnd load its vendors.
const EGL_EXTENSIONS: i32 = 0x3055;

/// Makes GLX go through the X server and this process's EGL find no vendor, while processes
/// started later (the web process) still get Mesa's EGL: libglvnd reads the vendor variable
/// once, on the first EGL call, which this makes happen with the variable set and then removes
/// it. Returns whether it changed anything; call before any thread starts.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn keep_software_gl_out_of_app_process() -> bool {
    let x11_only =
        std::env::var_os("DISPLAY").is_some() && std::env::var_os("WAYLAND_DISPLAY").is_none();
    if !x11_only || std::env::var_os(VENDORS).is_some() {
        return false; // Wayland needs EGL; or the user chose the vendors
    }
    if std::env::var_os(INDIRECT).is_none() {
        // GLX is only probed by GTK here; the web process uses EGL, which ignores this.
        std::env::set_var(INDIRECT, "1");
        SET_INDIRECT.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    std::env::set_var(VENDORS, "/dev/null");
    // SAFETY: dlopen/dlsym get NUL-terminated names; the symbol is libEGL's
    // `const char *eglQueryString(EGLDisplay dpy, EGLint name)`, called with EGL_NO_DISPLAY
    // (null) and a valid name; the library is never closed, so nothing outlives it, and the
    // returned string is not read.
    unsafe {
        let lib = libc::dlopen(c"libEGL.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        if !lib.is_null() {
            let sym = libc::dlsym(lib, c"eglQueryString".as_ptr());
            if !sym.is_null() {
                let query: extern "C" fn(*mut libc::c_void, i32) -> *const libc::c_char =
                    std::mem::transmute(sym);
                query(std::ptr::null_mut(), EGL_EXTENSIONS);
            }
        }
    }
    std::env::remove_var(VENDORS);
    true
}

/// Elsewhere GL is left alone.
#[cfg(not(target_os = "linux"))]
pub fn keep_software_gl_out_of_app_process() -> bool {
    false
}

/// Takes back [`INDIRECT`] once GTK has opened the display (its GLX probe reads the variable
/// then), so terminals and commands started from the app get direct GL as usual.
pub fn restore_gl_environment() {
    if SET_INDIRECT.swap(false, std::sync::atomic::Ordering::Relaxed) {
        std::env::remove_var(INDIRECT);
    }
}
