// The adapter between the Petstore document and Swagger UI: it shows what Swagger UI does not show by
// itself, each from the document's own extensions, so the page says exactly what the document says.
//   x-tagGroups       → a heading above the first tag of each navigation group
//   x-stability       → a badge on the operation (beta, experimental)
//   deprecated + x-deprecated-sunset → a "deprecated · sunset YYYY-MM-DD" badge
//   x-hideTryItPanel  → no "Try it out" for that operation
(function () {
  'use strict';

  function operationOf(system, path, method) {
    return system.specSelectors.specJson().getIn(['paths', path, method]);
  }

  function badges(system, op) {
    var h = system.React.createElement;
    var out = [];
    var stability = op && op.get('x-stability');
    if (stability) out.push(h('span', { key: 's', className: 'petstore-badge petstore-badge--' + stability, 'data-stability': stability }, stability));
    if (op && op.get('deprecated')) {
      var sunset = op.get('x-deprecated-sunset');
      out.push(h('span', { key: 'd', className: 'petstore-badge petstore-badge--deprecated', 'data-sunset': sunset || '' }, sunset ? 'deprecated · sunset ' + sunset : 'deprecated'));
    }
    return out;
  }

  function PetstorePlugin(system) {
    return {
      statePlugins: {
        spec: {
          wrapSelectors: {
            allowTryItOutFor: function (original) {
              return function (state, path, method) {
                var op = operationOf(system, path, method);
                return !(op && op.get('x-hideTryItPanel') === true) && original(path, method);
              };
            },
          },
        },
      },
      wrapComponents: {
        OperationSummaryPath: function (Original, sys) {
          return function (props) {
            var p = props.operationProps.toObject();
            var h = sys.React.createElement;
            return h('span', { className: 'petstore-summary-path' }, h(Original, props), badges(sys, operationOf(sys, p.path, p.method)));
          };
        },
        // A group is a heading over its tags; its own tag (which holds no operation) is not repeated.
        OperationTag: function (Original, sys) {
          return function (props) {
            var h = sys.React.createElement;
            var spec = sys.specSelectors.specJson();
            var groups = spec.get('x-tagGroups');
            if (!groups) return h(Original, props);
            if (groups.some(function (g) { return g.get('name') === props.tag; })) return null;
            var group = groups.find(function (g) { return g.get('tags').first() === props.tag; });
            if (!group) return h(Original, props);
            var name = group.get('name');
            var tag = spec.get('tags').find(function (t) { return t.get('name') === name; });
            return h('section', { className: 'petstore-group', 'data-group': name },
              h('h2', { className: 'petstore-group__title' }, name),
              tag && tag.get('description') ? h('p', { className: 'petstore-group__description' }, tag.get('description')) : null,
              h(Original, props));
          };
        },
      },
    };
  }

  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [PetstorePlugin],
    // Nothing leaves this server: no external validator badge.
    validatorUrl: null,
    displayRequestDuration: true,
    persistAuthorization: true,
    showCommonExtensions: true,
  });
})();
