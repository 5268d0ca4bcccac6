// A test plugin that claims another SDK ABI version: the loader must refuse it by name.
#include <boost/dll/alias.hpp>

namespace wrong_abi {
inline int abi_version() { return 9999; }
inline int describe() { return 0; } // never called: the ABI check comes first
} // namespace wrong_abi

BOOST_DLL_ALIAS(wrong_abi::abi_version, speedlab_abi_version)
BOOST_DLL_ALIAS(wrong_abi::describe, speedlab_describe)
