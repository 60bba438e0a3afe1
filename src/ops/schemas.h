// File: schemas.h
//
// Building blocks for operation schemas, so every operation describes ids,
// entities and lists the same way.

#ifndef BATON_SRC_OPS_SCHEMAS_H_
#define BATON_SRC_OPS_SCHEMAS_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "util/json_util.h"

namespace baton::schema {

// An id: letters, digits and . _ : - ; at most 128 characters.
Json Id(std::string description);
Json String(std::string description, int max_length = 10000);
// A file or folder path (at most 4096 bytes) that the CLI makes absolute
// ("x-baton-path"), so every process names the same file.
Json Path(std::string description);
Json Integer(std::string description);
// An integer from "min" to "max".
Json Integer(std::string description, int64_t min, int64_t max);
Json Boolean(std::string description);
Json Object(std::string description);  // any JSON object
Json Enum(std::string description, std::initializer_list<const char*> values);

// A task's trigger rule: all_success | all_done | none_failed.
Json TriggerRule();

// {"type": "object", "properties": ..., "required": ..., "additionalProperties": false}
Json Input(std::initializer_list<std::pair<const char*, Json>> properties,
           std::initializer_list<const char*> required = {});

// {"type": type}
Json Type(const char* type);
// {"type": [type, "null"]}
Json Nullable(const char* type);
// An output object whose listed properties are all required; additional
// properties allowed so fields can be added later.
Json Entity(std::initializer_list<std::pair<const char*, Json>> properties);

// Output entities; additional properties allowed so fields can be added.
Json ProjectOut();
Json AgentOut();
Json RunOut();
Json TaskOut();
Json EventOut();
// {"type":"object","properties":{"<key>": {"type":"array","items": item}}}
Json ListOf(const char* key, Json item);
// An object with no fixed shape.
Json AnyObject();

}  // namespace baton::schema

#endif  // BATON_SRC_OPS_SCHEMAS_H_
