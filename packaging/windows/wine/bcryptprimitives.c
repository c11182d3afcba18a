/* A stand-in for Windows' bcryptprimitives.dll, for running rigscope.exe under Wine 8 only (it is
   not in the zip): Rust's standard library (1.78 and later) imports ProcessPrng from that DLL, which
   Wine 8.0 lacks, so the executable cannot start there. This answers ProcessPrng with advapi32's
   RtlGenRandom (SystemFunction036), as Rust did before. packaging/windows/wine_check.sh builds it:

       x86_64-w64-mingw32-gcc -O2 -shared -static-libgcc -o bcryptprimitives.dll \
           bcryptprimitives.c bcryptprimitives.def -ladvapi32
*/
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
