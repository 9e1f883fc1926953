// Upward: low must not include high.
#include "high/b.hpp"
