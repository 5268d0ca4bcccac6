# Debian packages (scripts/install-deps.sh installs them). Libraries that the GPU machine
# lacks are linked statically (yaml-cpp, SQLite) or header-only (fmt, CLI11, json, Boost.DLL),
# so binaries built here run there unchanged.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED) # CRC-32 of profile stream chunks; libz.so.1 is on every target machine

find_path(YAML_CPP_INCLUDE_DIR yaml-cpp/yaml.h REQUIRED)
find_library(YAML_CPP_STATIC_LIBRARY NAMES libyaml-cpp.a yaml-cpp REQUIRED)
add_library(speedlab_yaml_cpp INTERFACE)
target_include_directories(speedlab_yaml_cpp SYSTEM INTERFACE ${YAML_CPP_INCLUDE_DIR})
target_link_libraries(speedlab_yaml_cpp INTERFACE ${YAML_CPP_STATIC_LIBRARY})

find_path(SQLITE3_INCLUDE_DIR sqlite3.h REQUIRED)
find_library(SQLITE3_STATIC_LIBRARY NAMES libsqlite3.a sqlite3 REQUIRED)
add_library(speedlab_sqlite3 INTERFACE)
target_include_directories(speedlab_sqlite3 SYSTEM INTERFACE ${SQLITE3_INCLUDE_DIR})
target_link_libraries(speedlab_sqlite3 INTERFACE ${SQLITE3_STATIC_LIBRARY} ${CMAKE_DL_LIBS} Threads::Threads m)

# Boost.DLL with std::filesystem: header-only, needs libdl.
add_library(speedlab_boost_dll INTERFACE)
target_link_libraries(speedlab_boost_dll INTERFACE Boost::headers ${CMAKE_DL_LIBS})
target_compile_definitions(speedlab_boost_dll INTERFACE BOOST_DLL_USE_STD_FS)

# fmt compiled once into a static library (cmake/speedlab_fmt.cpp says why), not header-only:
# the same code in the binaries, without compiling it again in every translation unit.
add_library(speedlab_fmt STATIC ${CMAKE_CURRENT_LIST_DIR}/speedlab_fmt.cpp)
# Not fmt::fmt-header-only (it defines FMT_HEADER_ONLY) nor fmt::fmt (it links libfmt.so): its headers only.
target_include_directories(speedlab_fmt SYSTEM PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_features(speedlab_fmt PUBLIC cxx_std_20)
