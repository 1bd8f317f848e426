//! Small x86-64 ELF files written by hand, for the controller image's tests: what the image
//! builder checks (a 64-bit little-endian x86-64 executable, and whether it names a dynamic
//! loader) without building a real static executable. They do not run.

/// `PT_LOAD`: a loadable segment.
pub const PT_LOAD: u32 = 1;
/// `PT_INTERP`: the program interpreter (the dynamic loader) a dynamically linked executable names.
pub const PT_INTERP: u32 = 3;

/// An x86-64 ELF executable header (`ET_EXEC`) followed by one program header per
/// `(p_type, content)`, each content stored after the headers and pointed to by its header.
pub fn executable(program_headers: &[(u32, &[u8])]) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"\x7fELF");
    b[4] = 2; // 64-bit
    b[5] = 1; // little-endian
    b[6] = 1; // ELF version
    b[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    b[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    b[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
    b[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    b[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
    let count = u16::try_from(program_headers.len()).expect("at most 65535 program headers");
    b[56..58].copy_from_slice(&count.to_le_bytes());
    let data_start = 64 + 56 * program_headers.len();
    let mut data = Vec::new();
    for (p_type, content) in program_headers {
        let mut ph = [0u8; 56];
        ph[..4].copy_from_slice(&p_type.to_le_bytes());
        ph[8..16].copy_from_slice(&((data_start + data.len()) as u64).to_le_bytes());
        ph[32..40].copy_from_slice(&(content.len() as u64).to_le_bytes());
        b.extend_from_slice(&ph);
        data.extend_from_slice(content);
    }
    b.extend_from_slice(&data);
    b
}

/// A statically linked executable: one loadable segment holding `content`, no interpreter.
pub fn static_executable(content: &[u8]) -> Vec<u8> {
    executable(&[(PT_LOAD, content)])
}

/// A dynamically linked executable naming the usual glibc loader.
pub fn dynamic_executable() -> Vec<u8> {
    executable(&[
        (PT_INTERP, b"/lib64/ld-linux-x86-64.so.2\0"),
        (PT_LOAD, b"code"),
    ])
}
