// Host-only code in a .cu file: no GPU runtime names, so nothing to port.
#include <array>
#include <cstdio>
#include <type_traits>

/* Compile-time helpers. A comment with "quotes" and a stray apostrophe: don't. */
template <int N>
struct Factorial {
    static constexpr long value = N * Factorial<N - 1>::value;
};

template <>
struct Factorial<0> {
    static constexpr long value = 1;
};

template <typename T, std::size_t N>
constexpr T accumulate(const std::array<T, N>& values) {
    T total{};
    for (const T& v : values) total += v;
    return total;
}

static_assert(Factorial<5>::value == 120, "5! is 120");
static_assert(std::is_same<decltype(accumulate(std::array<int, 2>{})), int>::value, "int sum");

int main() {
    constexpr std::array<int, 4> cubes{1, 8, 27, 64};
    const char* message = "sum of cubes: %d, 6! = %ld\n";
    std::printf(message, accumulate(cubes), Factorial<6>::value);
    return accumulate(cubes) == 100 ? 0 : 1;
}
