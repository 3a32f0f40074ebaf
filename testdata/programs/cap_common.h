// cap_common.h: what the capture programs in this folder share: error
// checks for the runtime and the driver API, a host clock, the median and
// spread of repeated timings, and a tiny flag reader.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(expr)                                                       \
    do {                                                                       \
        cudaError_t err_ = (expr);                                             \
        if (err_ != cudaSuccess) {                                             \
            std::fprintf(stderr, "%s: CUDA error %s at %s:%d in %s\n",         \
                         capProgram, cudaGetErrorName(err_), __FILE__,         \
                         __LINE__, #expr);                                     \
            std::exit(2);                                                      \
        }                                                                      \
    } while (0)

#define CU_CHECK(expr)                                                         \
    do {                                                                       \
        CUresult res_ = (expr);                                                \
        if (res_ != CUDA_SUCCESS) {                                            \
            const char* name_ = "?";                                           \
            cuGetErrorName(res_, &name_);                                      \
            std::fprintf(stderr, "%s: CUDA driver error %s at %s:%d in %s\n",  \
                         capProgram, name_, __FILE__, __LINE__, #expr);        \
            std::exit(2);                                                      \
        }                                                                      \
    } while (0)

// capProgram names the program in error messages; each program defines it.
extern const char* capProgram;

// hostMs is a monotonic host clock in milliseconds.
inline double hostMs() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// Spread holds the median, minimum and maximum of a series of timings.
struct Spread {
    double median, min, max;
};

// spreadOf returns the median (the mean of the middle two for an even
// count), minimum and maximum of v.
inline Spread spreadOf(std::vector<double> v) {
    if (v.empty()) return {0, 0, 0};
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return {med, v.front(), v.back()};
}

// printSeries prints every timing of a series and its median and spread,
// in one line each, as "LABEL ms: a b c ..." and "LABEL median X ms (min
// Y, max Z, n N)".
inline void printSeries(const char* label, const std::vector<double>& v) {
    std::printf("%s ms:", label);
    for (double x : v) std::printf(" %.3f", x);
    std::printf("\n");
    Spread s = spreadOf(v);
    std::printf("%s median %.3f ms (min %.3f, max %.3f, n %zu)\n", label, s.median, s.min,
                s.max, v.size());
}

// hasFlag reports whether argv holds the flag exactly.
inline bool hasFlag(int argc, char** argv, const char* flag) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], flag) == 0) return true;
    return false;
}

// intFlag returns the integer after the flag, or def when the flag is absent;
// a flag without a number after it stops the program with status 1.
inline long intFlag(int argc, char** argv, const char* flag, long def) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], flag) != 0) continue;
        char* end = nullptr;
        long v = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : 0;
        if (i + 1 >= argc || end == argv[i + 1] || *end != '\0' || v <= 0) {
            std::fprintf(stderr, "%s: %s needs a positive whole number\n", capProgram, flag);
            std::exit(1);
        }
        return v;
    }
    return def;
}

// strFlag returns the text after the flag, or def when the flag is absent.
inline const char* strFlag(int argc, char** argv, const char* flag, const char* def) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
    return def;
}
