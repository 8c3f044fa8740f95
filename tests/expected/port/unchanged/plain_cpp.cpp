// A plain C++ translation unit with nothing to port: it must come back byte-identical.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace geometry {

/* Points and curves; "cumulative" sums below are not device code. */
template <typename T>
struct Point {
    T x{};
    T y{};
};

template <typename T>
T cross(const Point<T>& a, const Point<T>& b) { return a.x * b.y - a.y * b.x; }

std::vector<double> cumulative_sum(const std::vector<double>& values) {
    std::vector<double> out(values.size());
    double running = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = running += values[i];
    return out;
}

}  // namespace geometry

int main() {
    std::map<std::string, int> counts{{"cube", 6}, {"curve", 1}, {"cuboid", 6}};
    geometry::Point<int> a{1, 2}, b{3, 4};
    const auto sums = geometry::cumulative_sum({1.0, 2.0, 3.5});
    const char* raw = R"(a "quoted" \n word)";
    std::printf("cross=%d last=%g faces=%d %s %c\n", geometry::cross(a, b), sums.back(),
                counts["cube"], raw, '\'');
    return std::max(0, counts["curve"] - 1);
}
