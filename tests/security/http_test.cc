#include <gtest/gtest.h>

#include "test_util.h"

namespace baton::testing {
namespace {

TEST(SecurityPlaceholder, Builds) { SUCCEED(); }

}  // namespace
}  // namespace baton::testing
