// The sgai profile (see sgai.h once it lands).
namespace baton {}  // namespace baton
