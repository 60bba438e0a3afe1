# Tiny helpers in the manner of abseil's absl_cc_library / absl_cc_test.
#
# baton_cc_library(NAME x SRCS a.cc b.cc DEPS other_lib)
#   A library baton_x whose sources see include/ and src/: static, but
#   shared in sanitizer builds, where each of ~45 test executables would
#   otherwise carry its own 380 MB instrumented copy (17 GB a tree).
# baton_cc_test(NAME x SRCS x_test.cc DEPS lib [LABELS unit] [TIMEOUT 120]
#               [POSTGRES [SQLITE_ONLY Suite.Case:Suite2.*]])
#   A GoogleTest binary registered with CTest, tests discovered one by one;
#   not built at all when labelled scenario and BATON_SCENARIO_SUITES is OFF.
#   POSTGRES registers its tests a second time as "pg:Suite.Case", run with
#   BATON_TEST_BACKEND=postgres: every store the suite opens through
#   OpenApi is then a PostgreSQL database (tests/testing/test_util.h). The
#   suites of BackendTest run there already and are left out, and so are
#   suites written for PostgreSQL alone (named *OnPostgres*Test) and the
#   SQLITE_ONLY cases (gtest filter patterns), each with its reason written
#   beside the call.
#
# A library precompiles the headers nearly every file includes (nlohmann's
# json.hpp above all) unless BATON_PCH is OFF: 14 % less CPU to build
# baton_engine_core and what it links. Every file still includes what it
# uses; the precompiled header only saves parsing it again (and hides no
# forgotten standard include that util/json_util.h, included nearly
# everywhere, did not hide already). A test binary has too few files to
# repay its own.

set(BATON_PCH_HEADERS <map> <optional> <string> <string_view> <vector> <nlohmann/json.hpp>)

function(baton_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  if(BATON_SANITIZE)
    add_library(baton_${ARG_NAME} SHARED ${ARG_SRCS})
  else()
    add_library(baton_${ARG_NAME} STATIC ${ARG_SRCS})
  endif()
  target_include_directories(baton_${ARG_NAME} PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
  target_link_libraries(baton_${ARG_NAME} PUBLIC ${ARG_DEPS})
  if(BATON_PCH)
    target_precompile_headers(baton_${ARG_NAME} PRIVATE ${BATON_PCH_HEADERS})
  endif()
endfunction()

function(baton_cc_test)
  cmake_parse_arguments(ARG "POSTGRES" "NAME;TIMEOUT;SQLITE_ONLY" "SRCS;DEPS;LABELS" ${ARGN})
  # The sanitizer tree runs only the unit suites: it need not build the rest.
  if(NOT BATON_SCENARIO_SUITES AND "scenario" IN_LIST ARG_LABELS)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  # A suite's own file, not the code it tests, is built without optimising:
  # GoogleTest's expansions made -O2 most of its time (coordination_test.cc:
  # 19 s at -O2, 11 s at -O0), and the time a suite runs is the engine's.
  target_compile_options(${ARG_NAME} PRIVATE -O0)
  # Where the checkout is, so suites find ../shared/fixtures without help.
  target_compile_definitions(${ARG_NAME} PRIVATE BATON_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  # Every suite may open a PostgreSQL store (tests/testing/pg_test_db.h).
  gtest_discover_tests(${ARG_NAME}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} FIXTURES_REQUIRED postgres
    ENVIRONMENT "BATON_BIN=$<TARGET_FILE:baton>"
    DISCOVERY_TIMEOUT 60)
  if(ARG_POSTGRES)
    set(filter "-Backends/*:*OnPostgres*")
    if(ARG_SQLITE_ONLY)
      set(filter "${filter}:${ARG_SQLITE_ONLY}")
    endif()
    # One ENVIRONMENT entry: a list would not survive discovery, and
    # BatonBin() knows the binary's path without BATON_BIN.
    gtest_discover_tests(${ARG_NAME}
      TEST_PREFIX "pg:" TEST_FILTER "${filter}"
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} FIXTURES_REQUIRED postgres
      ENVIRONMENT "BATON_TEST_BACKEND=postgres"
      DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# baton_embed_files(OUT file.cc FUNC Name FILES a.json b.json COMMENT "...")
#   Generates file.cc defining Name(), which returns the files' contents
#   (cmake/embed_files.cmake), rebuilt when any of them changes.
function(baton_embed_files)
  cmake_parse_arguments(ARG "" "OUT;FUNC;COMMENT" "FILES" ${ARGN})
  # The list travels as one argument, separated by "|" (";" would split it).
  string(REPLACE ";" "|" list "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${ARG_OUT}
    COMMAND ${CMAKE_COMMAND} -DOUT=${ARG_OUT} -DFUNC=${ARG_FUNC} "-DFILES=${list}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "${ARG_COMMENT}"
    VERBATIM)
endfunction()
