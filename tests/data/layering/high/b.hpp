// Allowed: high includes low.
#include "low/a.hpp"
