//! A scheme's parameters: the table each algorithm declares (`ParamInfo`) and typed, range-checked
//! access to the values an experiment gives (`Params`).

/// One tunable of a scheme.
pub struct ParamInfo {
    pub name: &'static str,
    pub default: f64,
    pub doc: &'static str,
}

/// A scheme's parameters from JSON (an object or null), every name checked against the
/// scheme's declared table: the typed view, or the error naming the unknown parameter and the
/// valid ones.
pub fn checked<'a>(scheme: &'a str, declared: &[ParamInfo], params: &'a serde_json::Value)
                   -> Result<Params<'a>, String> {
    let obj = match params {
        serde_json::Value::Null => None,
        serde_json::Value::Object(m) => Some(m),
        other => return Err(format!("parameters of scheme {scheme:?} must be an object or null, got {other}")),
    };
    if let Some(k) = obj.and_then(|m| m.keys().find(|k| !declared.iter().any(|p| p.name == k.as_str()))) {
        let valid: Vec<&str> = declared.iter().map(|p| p.name).collect();
        return Err(format!("unknown parameter {k:?} for scheme {scheme:?}; valid parameters: {}",
                           if valid.is_empty() { "(none)".to_string() } else { valid.join(", ") }));
    }
    Ok(Params { scheme, obj })
}

/// Typed access to a scheme's JSON parameters (already checked for unknown names).
pub struct Params<'a> {
    pub scheme: &'a str,
    pub obj: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

impl<'a> Params<'a> {
    fn get(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.obj.and_then(|m| m.get(key))
    }
    fn type_err(&self, key: &str, want: &str, v: &serde_json::Value) -> String {
        format!("parameter {:?} of scheme {:?} must be {}, got {}", key, self.scheme, want, v)
    }
    /// Integer parameter within [lo, hi].
    pub fn int(&self, key: &str, default: i64, lo: i64, hi: i64) -> Result<i64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => {
                let x = if let Some(i) = v.as_i64() {
                    i
                } else if let Some(f) = v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9e15) {
                    f as i64
                } else {
                    return Err(self.type_err(key, "an integer", v));
                };
                if x < lo || x > hi {
                    return Err(format!(
                        "parameter {:?} of scheme {:?} must be in [{}, {}], got {}",
                        key, self.scheme, lo, hi, x
                    ));
                }
                Ok(x)
            }
        }
    }
    /// Boolean parameter (true/false or 0/1).
    pub fn bool(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some(serde_json::Value::Bool(b)) => Ok(*b),
            Some(v) => match v.as_i64() {
                Some(0) => Ok(false),
                Some(1) => Ok(true),
                _ => Err(self.type_err(key, "a boolean (or 0/1)", v)),
            },
        }
    }
    /// Real parameter within [lo, hi].
    pub fn float(&self, key: &str, default: f64, lo: f64, hi: f64) -> Result<f64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => {
                let x = v.as_f64().ok_or_else(|| self.type_err(key, "a number", v))?;
                if !(x >= lo && x <= hi) {
                    return Err(format!(
                        "parameter {:?} of scheme {:?} must be in [{}, {}], got {}",
                        key, self.scheme, lo, hi, x
                    ));
                }
                Ok(x)
            }
        }
    }
    /// Unsigned 64-bit parameter, 0 by default (seeds exceed the i64 range of `int`); an
    /// integral float is accepted as JSON writers may produce one.
    pub fn u64(&self, key: &str) -> Result<u64, String> {
        match self.get(key) {
            None => Ok(0),
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
                .ok_or_else(|| self.type_err(key, "a non-negative integer", v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_takes_integers_beyond_i64_and_integral_floats() {
        let m = serde_json::json!({"seed": 18446744073709551615u64, "stream": 3.0, "bad": -1, "frac": 1.5});
        let p = Params { scheme: "x", obj: m.as_object() };
        assert_eq!(p.u64("seed").unwrap(), u64::MAX);
        assert_eq!(p.u64("stream").unwrap(), 3);
        assert_eq!(p.u64("absent").unwrap(), 0);
        for k in ["bad", "frac"] {
            let e = p.u64(k).unwrap_err();
            assert!(e.contains(k) && e.contains("non-negative integer"), "{}", e);
        }
    }
}
