// Questions to the human (see questions.h once it lands).
namespace baton {}  // namespace baton
