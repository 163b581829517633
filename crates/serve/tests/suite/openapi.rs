//! The checked-in OpenAPI document and the router agree, route by route.

use serde_json::Value;

use super::harness::Server;

#[tokio::test]
async fn every_route_is_documented_and_every_documented_route_is_served() {
    let doc: Value = serde_json::from_str(cairn_serve::openapi_document()).unwrap();
    assert_eq!(doc["openapi"].as_str().unwrap().get(..3), Some("3.1"));
    let mut documented = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "patch", "delete", "put"].contains(&method.as_str()) {
                documented.push((method.clone(), path.clone()));
            }
        }
    }
    let mut listed: Vec<(String, String)> = cairn_serve::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    documented.sort();
    listed.sort();
    assert_eq!(documented, listed);
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());

    // The router serves exactly these: each answers something other than "no such route"
    // (and another method answers 405).
    let s = Server::start(|_| {}).await;
    for (method, path) in &listed {
        let concrete = path
            .replace("{id}", "nope")
            .replace("{requestId}", "rq")
            .replace("{steerId}", "st")
            .replace("{turn}", "1");
        let r = s
            .http
            .request(method.to_uppercase().parse().unwrap(), s.url(&concrete))
            .bearer_auth(&s.token)
            .send()
            .await
            .unwrap();
        let status = r.status();
        let body = r.text().await.unwrap_or_default();
        assert!(
            !body.contains("\"not_found\"") && status != 405,
            "{method} {path}: {status} {body}"
        );
    }
    let r = s.get("/openapi.json").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
}
