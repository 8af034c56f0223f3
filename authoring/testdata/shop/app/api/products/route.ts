const catalogue = ["hammer", "wrench", "pliers"];

export function GET() {
  return Response.json({
    products: catalogue.map((id) => {
      return { id: id, name: id.toUpperCase() };
    }),
  });
}
