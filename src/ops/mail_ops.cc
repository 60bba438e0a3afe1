#include "ops/api.h"

namespace baton {

Status RegisterMailOps(Registry&) { return Status(); }

}  // namespace baton
