//! A global allocator that counts, per thread and while that thread asks for it, the
//! allocations made and the largest one, and for the whole process the bytes allocated and not
//! yet freed. Every test binary has it (through `common`): threads that do not ask run as with
//! the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes allocated through Rust's allocator and not yet freed, by every thread: unlike resident
/// memory, it does not count what the allocator keeps for reuse, nor the graphics driver's own.
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// [`LIVE_BYTES`] now.
pub fn live_bytes() -> usize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// Counts allocations (and reallocations) per thread, while that thread asks to be watched
/// (tests run in parallel threads; each counts only its own).
pub struct Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    if WATCHED.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        let _ = LARGEST.try_with(|n| n.set(n.get().max(size)));
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged,
// so it keeps `GlobalAlloc`'s contract; counting touches only thread-locals and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded as received (see the impl).
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded as received (see the impl).
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded as received; `ptr` came from this allocator, that is from `System`.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        // A failed reallocation leaves the old block as it was.
        if !moved.is_null() {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        moved
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received; `ptr` came from this allocator, that is from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What `f` allocated on this thread, as counted by [`Counting`].
#[derive(Debug, Clone, Copy)]
pub struct Allocated {
    pub count: usize,
    /// The largest single allocation or reallocation, in bytes.
    pub largest: usize,
}

/// Runs `f` with this thread watched; its result and what it allocated.
pub fn watch<T>(f: impl FnOnce() -> T) -> (T, Allocated) {
    let before = ALLOCATIONS.with(Cell::get);
    let largest_before = LARGEST.with(|n| n.replace(0));
    WATCHED.with(|w| w.set(true));
    let result = f();
    WATCHED.with(|w| w.set(false));
    let allocated = Allocated {
        count: ALLOCATIONS.with(Cell::get) - before,
        largest: LARGEST.with(|n| n.replace(largest_before.max(n.get()))),
    };
    (result, allocated)
}
