// sgai flow graphs and GOAL.md (see sgai_flow.h); implementation lands next.
#include "model/sgai_flow.h"
